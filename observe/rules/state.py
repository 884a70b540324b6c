"""A rule's own accumulator over one launch's events (`State`), below the rules' context and the
shared summary that both hold them."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

if TYPE_CHECKING:
    from observe.settings import Settings

E = TypeVar("E")


class State(Generic[E]):
    """A rule's own accumulator over one launch's events (a dataclass of counts, bounded): the
    diagnosis hands it each event of type ``takes``, in log order, with the ``Settings``; the rules
    that declare it in ``Rule.states`` read it as ``ctx.state(Kind)`` (typed: mypy sees its fields).
    What several rules or the report read stays in the shared ``rules.summary.Summary``."""

    takes: ClassVar[type]

    def add(self, ev: E, settings: Settings) -> None:
        raise NotImplementedError
