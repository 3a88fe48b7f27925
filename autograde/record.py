"""`record`: a grading record, typed: its status, its conditions, the rule that decides the status,
its wire forms.

A record is what grading one (student, assignment) leaves:
``OUT/details/<student>/<assignment>.json`` and a row of ``OUT/grades.csv``. Strings stay the wire
format (the JSON and the CSV are what they were); in the harness a record is a ``GradeRecord``, its
conditions ``Condition``\\s and its status a ``Status``:

    r = GradeRecord.start("alice", "02_logits_softmax", max_score=26.0)
    r.add(Status.KERNEL_DIED, "cell 5 killed the kernel").add(Status.TIMEOUT, "cell 3 hit the time
    limit") r.finish().status     # Status.TIMEOUT: the first, in Status's order, among the
    conditions r.detail              # 'cell 5 killed the kernel; cell 3 hit the time limit'
    Condition("timout", "...")   # ValueError: a misspelt kind can no longer grade as `graded`

``GradeRecord.finish`` is the one place a status is decided (docs/architecture.md);
``to_json``/``from_json`` are the details file's JSON (autograde/tests/test_record.py: the round
trip is exact, byte for byte); its row of grades.csv is autograde/grades_csv.py's. Imports only the
standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Status(str, Enum):
    """A record's status, most severe first: a record's status is the first of these among its
    conditions.

    memory_limit comes before kernel_died: a kernel killed by the memory cgroup died because of
    memory. docs/instructors.md ("Statuses") lists them in this order (test_record.py holds the two
    equal).
    """

    MISSING = "missing"
    INVALID_NAME = "invalid_name"
    AMBIGUOUS = "ambiguous"
    INVALID_NOTEBOOK = "invalid_notebook"
    WRONG_ASSIGNMENT = "wrong_assignment"
    ERROR = "error"
    UNSANDBOXED = "unsandboxed"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    KERNEL_DIED = "kernel_died"
    FLAGGED = "flagged"
    NEEDS_MANUAL_GRADE = "needs_manual_grade"
    GRADED = "graded"

    def __str__(self) -> str:
        return self.value

    @property
    def final(self) -> bool:
        """Whether the score is final: not while written answers wait for a human or the harness
        failed (an LMS export leaves such scores blank, so the LMS keeps what it had)."""
        return self not in (Status.NEEDS_MANUAL_GRADE, Status.ERROR)

    @classmethod
    def parse(cls, text: str) -> Status:
        """The Status named ``text``; a ValueError naming the statuses for anything else."""
        try:
            return cls(text)
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise ValueError(f"unknown condition kind {text!r} (a Status: {names})") from None

    @classmethod
    def most_severe(cls, kinds) -> Status:
        """The first Status, in this order, among ``kinds``; ``graded`` when there are none."""
        present = set(kinds)
        return next((s for s in cls if s in present), cls.GRADED)


@dataclass(frozen=True)
class Condition:
    """Something that applied to a record: its kind (a Status) and a sentence for the instructor
    (``detail``)."""

    kind: Status
    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.kind, Status):
            if not isinstance(self.kind, str):
                raise TypeError(f"a condition's kind is a Status, not {type(self.kind).__name__}")
            object.__setattr__(self, "kind", Status.parse(self.kind))
        if not isinstance(self.text, str):
            raise TypeError(f"a condition's text is a str, not {type(self.text).__name__}")

    def to_json(self) -> list[str]:
        return [self.kind.value, self.text]

    @classmethod
    def from_json(cls, pair) -> Condition:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise ValueError(f"a condition is [kind, text], not {pair!r:.100}")
        return cls(pair[0], pair[1])


# words of the notes that say a repair changed what was graded (intake's notes): the detail shows
# the first three
REPAIRS = ("put back", "graded as code", "restored as")
# the keys GradeRecord names; every other key of a details file is kept as it is, in ``extra``
_REQUIRED = ("student", "assignment", "score", "max_score", "conditions")
_OPTIONAL = ("notes", "notebooks", "flags", "status", "detail")


@dataclass
class GradeRecord:
    """One (student, assignment)'s grading record. ``None`` in an optional field: the key is absent
    from the details file (flags: intake never ran; status and detail: not finished yet; notes and
    notebooks: a record written by hand). ``extra`` holds every other key as it is (late,
    fingerprint, notebooks' timings, ...)."""

    student: str
    assignment: str
    score: float
    max_score: float
    conditions: list[Condition] = field(default_factory=list)
    notes: list[str] | None = None
    notebooks: dict[str, Any] | None = None
    flags: list[str] | None = None
    status: Status | None = None
    detail: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def start(cls, student: str, assignment: str, max_score: float, **extra: Any) -> GradeRecord:
        """A new record: score 0, no condition, no note, no notebook graded yet."""
        return cls(
            student,
            assignment,
            score=0.0,
            max_score=max_score,
            notes=[],
            notebooks={},
            extra=dict(extra),
        )

    def add(self, kind: Status | str, text: str) -> GradeRecord:
        """Record a condition (a kind that is not a Status raises)."""
        self.conditions.append(
            Condition(Status.parse(kind) if isinstance(kind, str) else kind, text)
        )
        return self

    def has(self, kind: Status) -> bool:
        return any(c.kind is kind for c in self.conditions)

    def finish(self) -> GradeRecord:
        """Decide the status (the first Status among the conditions; flags add a ``flagged`` one)
        and the detail (every condition once, the repairs that changed what was graded, how many
        answers wait for a human)."""
        if self.flags and not self.has(Status.FLAGGED):
            self.add(Status.FLAGGED, f"{len(self.flags)} pattern(s) to look at (see flags)")
        self.status = Status.most_severe(c.kind for c in self.conditions)
        seen, detail = set(), []
        for c in self.conditions:
            if c not in seen and c.kind is not Status.NEEDS_MANUAL_GRADE:
                seen.add(c)
                detail.append(c.text)
        # repairs that change what was graded (a cell put back, retyped, restored): the instructor
        # sees them here
        detail += [n for n in self.notes or [] if any(w in n for w in REPAIRS)][:3]
        manual = [c for c in self.conditions if c.kind is Status.NEEDS_MANUAL_GRADE]
        if manual:
            detail.append(f"{len(manual)} answer(s) to grade by hand")
        self.detail = "; ".join(detail)
        return self

    def to_json(self) -> dict[str, Any]:
        """The details file's dict (``course.dump_json`` writes it): the same keys and values as
        ever."""
        out: dict[str, Any] = dict(self.extra)
        out.update(
            student=self.student,
            assignment=self.assignment,
            score=self.score,
            max_score=self.max_score,
            conditions=[c.to_json() for c in self.conditions],
        )
        for key in _OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                out[key] = value.value if isinstance(value, Status) else value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradeRecord:
        """A record from a details file's dict (``to_json`` gives it back, equal); a condition kind
        or a status that is not a Status raises ValueError, a missing required key KeyError."""
        missing = [k for k in _REQUIRED if k not in data]
        if missing:
            raise KeyError(f"a grading record needs {', '.join(missing)}")
        status = data.get("status")
        return cls(
            data["student"],
            data["assignment"],
            score=data["score"],
            max_score=data["max_score"],
            conditions=[Condition.from_json(c) for c in data["conditions"]],
            notes=data.get("notes"),
            notebooks=data.get("notebooks"),
            flags=data.get("flags"),
            status=None if status is None else Status.parse(status),
            detail=data.get("detail"),
            extra={k: v for k, v in data.items() if k not in _REQUIRED + _OPTIONAL},
        )
