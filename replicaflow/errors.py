"""The one exception type the CLI turns into a one-sentence error and a non-zero exit."""


class ReplicaflowError(Exception):
    """Bad input or environment, described in one sentence that names the field, file or line."""
