"""The end-to-end commands: each module chains sim/, ingest/, pipeline/ and report/ for one CLI command.

The only layer that knows more than one of those packages (docs/architecture.md): it decides what runs in
which order and passes one package's outputs to the next; it holds no rule and no computation.
Only ``cli`` imports it.
"""
