"""Status codes, as data (upstream framework.Code, restricted to what Filter and PostFilter plugins return)."""
SUCCESS = 0
UNSCHEDULABLE = 1                     # may pass after other pods leave (preemption can help)
UNSCHEDULABLE_AND_UNRESOLVABLE = 2    # no change of pods on the node can help
ERROR = 3                             # upstream's Error status: a Filter failed on the node (a cycle whose walk
                                      # over the nodes meets it fails with the plugin's message, sched/cycle.py),
                                      # or a PostFilter plugin failed (it ends RunPostFilterPlugins)

CODE_NAMES = {SUCCESS: "Success", UNSCHEDULABLE: "Unschedulable",
              UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable", ERROR: "Error"}

MAX_NODE_SCORE = 100
