"""The typed errors the library raises for bad input; the CLI turns each into one line and exit 2."""


class PackagerError(Exception):
    """Base of every error caused by the user's input rather than by a bug."""


class ModelError(PackagerError):
    """The file is not a readable TFLite model (truncated, corrupt, wrong identifier, bad indices...)."""


class PlanError(PackagerError):
    """A plan is invalid, or cannot be made for the given records."""


class RecordsError(PackagerError):
    """A usage-records file (MiniMalloc CSV) is malformed."""


class SolverLimitError(PlanError):
    """A solver reached its limits before finding any plan: the input is too large for it."""


def shown(text: str, limit: int = 60) -> str:
    """A name taken from a file, as an error message may quote it: control characters and other
    unprintable ones escaped, at most `limit` characters (a file's name can be any bytes, and
    hundreds of them would bury the message)."""
    escaped = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return escaped if len(escaped) <= limit else escaped[:limit - 3] + "..."


class InternalError(Exception):
    """Something of ours broke its own rules (a plan we made failed the independent check): a bug
    in tflpack, never the user's input. Not a PackagerError, so never reported as bad input."""
