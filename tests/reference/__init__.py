"""Independent, deliberately plain reference implementation of kube-scheduler v1.36.

One pod at a time, one node at a time, plain Python ints/floats, written from the
upstream Go semantics (pkg/scheduler/framework/plugins/*).  It is the oracle the
vectorised kernels are tested against; it must never import phalanx.kernels or
phalanx.sched (only duck-typed pydantic objects from phalanx.cluster_models and a
Profile-like object).
"""

from .plugins import (  # noqa: F401
    MAX_NODE_SCORE,
    SUCCESS,
    UNSCHEDULABLE,
    UNSCHEDULABLE_AND_UNRESOLVABLE,
)
from .scheduler import (  # noqa: F401
    RefResult,
    ref_filter,
    ref_schedule,
    ref_schedule_one,
    ref_scores,
)
