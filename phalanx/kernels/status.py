"""Filter status codes, as data (upstream framework.Code, restricted to what filters return)."""
SUCCESS = 0
UNSCHEDULABLE = 1                     # may pass after other pods leave (preemption can help)
UNSCHEDULABLE_AND_UNRESOLVABLE = 2    # no change of pods on the node can help
ERROR = 3                             # the Filter failed on the node (upstream's Error status): a cycle whose walk
                                      # over the nodes meets it fails with the plugin's message (sched/cycle.py)

CODE_NAMES = {SUCCESS: "Success", UNSCHEDULABLE: "Unschedulable",
              UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable", ERROR: "Error"}

MAX_NODE_SCORE = 100
