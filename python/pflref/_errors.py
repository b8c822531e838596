# SPDX-License-Identifier: GPL-3.0-or-later
"""Errors of the C library as Python exceptions (the status classes of
include/pflref/status.h, docs/python.md "Errors")."""

STATUS_NAMES = {1: "invalid", 2: "nomem", 3: "io", 4: "diverged",
                5: "internal"}


class Error(Exception):
    """A failure the library reported: .status (the pflref_status code),
    .kind (its name), .where (a JSON path or argument, "" when none),
    .message; .round, .client, .step (None unless located in a run)."""

    def __init__(self, status, where, message, round=-1, client=-1, step=-1):
        self.status = status
        self.kind = STATUS_NAMES.get(status, "status %d" % status)
        self.where = where
        self.message = message
        self.round = None if round < 0 else round
        self.client = None if client < 0 else client
        self.step = None if step < 0 else step
        super().__init__(str(self))

    def __str__(self):
        at = "%s: " % self.where if self.where else ""
        return "%s (%s)" % (at + self.message, self.kind)


class InvalidInput(Error, ValueError):
    """PFLREF_EINVAL: a malformed spec, vector or candidate (the CLI's
    exit 2); .where names the field."""


class DivergenceError(Error, ArithmeticError):
    """PFLREF_EDIVERGE: the reference's iterate became NaN or Inf at
    .round, .client, .step (the CLI's exit 3)."""


def error_for(status, where, message, round=-1, client=-1, step=-1):
    cls = {1: InvalidInput, 4: DivergenceError}.get(status, Error)
    return cls(status, where, message, round, client, step)
