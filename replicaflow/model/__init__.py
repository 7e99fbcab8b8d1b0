"""The rules of docs/semantics.md as pure functions over NumPy arrays (and Spark Columns for predicates).

No I/O, no Spark sessions, no files: the simulator and the pipeline both build on this package.
"""
