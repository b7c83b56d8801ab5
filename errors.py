"""The two kinds of failure the CLI distinguishes.

`InputError` is a user mistake (bad name, missing file, wrong column): the CLI prints one
line and exits with 2, having written nothing. `RuntimeFault` is something that went wrong
while doing valid work (a backend that keeps failing): one line, exit 1, finished work kept.
"""


class ShiftbenchError(Exception):
    """Base class for errors the CLI reports as one line."""

    exit_code = 1


class InputError(ShiftbenchError):
    """The user asked for something that cannot be done as asked."""

    exit_code = 2


class RuntimeFault(ShiftbenchError):
    """Valid work failed at run time."""

    exit_code = 1


def shown_url(url: str) -> str:
    """`url` as it may be printed or recorded: a password (or a user name) in it is
    replaced by `***`, so `http://me:secret@host/v1` shows as `http://***@host/v1`. The
    URL with its credentials is for the connection alone."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))
