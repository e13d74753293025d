"""What a simulation step reports: decisions and condition changes, in the order they happened.

The scheduler appends typed entries to a DecisionLog (one entry per decision, holding all the pods it concerns,
so a batch of 10,000 pods is one entry); `Record`s, one per pod, are made only when asked for.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

BOUND = "Bound"                        # a pod was bound to `node`
UNSCHEDULABLE = "Unschedulable"        # an attempt left the pod pending; `message` says why
WAITING = "WaitingOnPermit"            # placed on `node`, held at Permit until its gang is complete
PERMIT_REJECTED = "PermitRejected"     # a waiting pod was rejected (timeout) or preempted; its node was released
DELETED = "Deleted"                    # a pod left the cluster (deleted, completed, or its node removed)
POD_GROUP_SCHEDULED = "PodGroupScheduled"   # the PodGroup condition changed; `status`, `reason`, `message`
NOMINATED = "Nominated"                # a preemptor's status.nominatedNodeName was set to `node`
PREEMPTED = "Preempted"                # a victim got DisruptionTarget (PreemptionByScheduler) and is evicted (a
                                       # victim waiting at Permit is preempted there instead: PERMIT_REJECTED)


@dataclass(frozen=True)
class Record:
    time: float
    kind: str
    object: str                        # "namespace/name" of the pod or PodGroup
    node: str | None = None
    message: str = ""
    status: str | None = None          # condition status ("True" / "False") for POD_GROUP_SCHEDULED
    reason: str | None = None          # condition reason ("Unschedulable") for POD_GROUP_SCHEDULED


# Not frozen: a frozen dataclass sets each field through object.__setattr__, four times the cost of making this one
# per binding (a run of a few pods is one).
@dataclass(slots=True)
class Placed:
    """Pods bound (BOUND) or waiting at Permit (WAITING) on nodes."""
    kind: str
    time: float
    pods: list
    keys: list[str]                    # (k,) the pods' keys
    node_ids: np.ndarray               # (k,) int64
    nodes: list[str]

    def records(self) -> list[Record]:
        return [Record(self.time, self.kind, key, node) for key, node in zip(self.keys, self.nodes)]


@dataclass(frozen=True)
class Failed:
    """Pods left pending (UNSCHEDULABLE) or rejected or preempted at Permit (PERMIT_REJECTED), with why."""
    kind: str
    time: float
    pods: list
    message: str

    def records(self) -> list[Record]:
        return [Record(self.time, self.kind, p.key, message=self.message) for p in self.pods]


@dataclass(frozen=True, slots=True)       # one per evicted pod: slots make it a third cheaper to make
class Deleted:
    time: float
    key: str
    reason: str

    def records(self) -> list[Record]:
        return [Record(self.time, DELETED, self.key, message=self.reason)]


@dataclass(frozen=True)
class GroupCondition:
    """A PodGroup's PodGroupScheduled condition changed."""
    time: float
    key: str
    status: str
    reason: str
    message: str

    def records(self) -> list[Record]:
        return [Record(self.time, POD_GROUP_SCHEDULED, self.key, message=self.message, status=self.status,
                       reason=self.reason)]


@dataclass
class Preempted:
    """A preemption: the preemptor (a pod nominated to `node`, or a PodGroup whose placeable members are
    `nominated`) and its victims (pod keys, most important first; an entry is complete once the cycle that made it
    ends): evicted, but for those waiting at Permit, which are preempted there and not deleted (`rejected`: their
    PERMIT_REJECTED records follow the entry's)."""
    time: float
    preemptor: str
    node: str                          # "" for a PodGroup
    victims: list[str]
    kind: str = "Pod"                  # "Pod" | "PodGroup"
    nominated: dict[str, str] = field(default_factory=dict)   # PodGroup: member key -> node
    domain: str = ""                   # a topology-constrained PodGroup (beyond v1.36): the domain it preempted in
    rejected: list[str] = field(default_factory=list)         # the victims that were waiting at Permit

    @property
    def evicted(self) -> list[str]:
        """The victims deleted (all but those preempted at Permit), in order."""
        if not self.rejected:
            return self.victims
        rejected = set(self.rejected)
        return [v for v in self.victims if v not in rejected]

    @property
    def reason(self) -> str:
        if self.kind == "PodGroup":
            return f"preempted by podgroup {self.preemptor}"
        return f"preempted by pod {self.preemptor} on node {self.node}"

    def records(self) -> list[Record]:
        nominated = [Record(self.time, NOMINATED, member, node) for member, node in self.nominated.items()] \
            if self.kind == "PodGroup" else [Record(self.time, NOMINATED, self.preemptor, self.node)]
        return nominated + [Record(self.time, PREEMPTED, v, self.node or None, message=self.reason)
                            for v in self.evicted]

    def summary(self) -> dict:
        """The entry as `phalanx schedule --json` reports it."""
        out = {"preemptor": self.preemptor, "kind": self.kind}
        out.update({"nominated": dict(self.nominated)} if self.kind == "PodGroup" else {"node": self.node})
        if self.domain:
            out["domain"] = self.domain
        out["victims"] = list(self.victims)
        if self.rejected:
            out["rejected_at_permit"] = list(self.rejected)
        return out


class DecisionLog:
    """Every decision, in order; positions are absolute (they stay valid after the oldest entries are forgotten)."""

    def __init__(self):
        self.entries: list = []
        self.forgotten = 0               # entries dropped from the front (forget)

    def __len__(self) -> int:
        return self.forgotten + len(self.entries)

    def append(self, entry) -> None:
        self.entries.append(entry)

    def since(self, start: int) -> list:
        """The entries from position `start` on (those still kept)."""
        return self.entries[max(start - self.forgotten, 0):]

    def forget(self, upto: int) -> None:
        """Drop the entries before position `upto` (a long simulation that read them keeps memory flat)."""
        drop = min(max(upto - self.forgotten, 0), len(self.entries))
        del self.entries[:drop]
        self.forgotten += drop

    def records(self, start: int = 0) -> list[Record]:
        return [r for entry in self.since(start) for r in entry.records()]

    def bindings(self, start: int = 0) -> dict[str, str]:
        """pod key -> node of every BOUND decision since `start`."""
        out: dict[str, str] = {}
        for entry in self.since(start):
            if isinstance(entry, Placed) and entry.kind == BOUND:
                out.update(zip(entry.keys, entry.nodes))
        return out
