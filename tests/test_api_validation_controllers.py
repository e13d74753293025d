"""What the API server rejects in a workload controller, a Job, a CronJob or a PodDisruptionBudget (v1.36:
pkg/apis/apps/validation, pkg/apis/batch/validation, pkg/apis/policy/validation), phalanx rejects with one line
naming the object and the field: a template restartPolicy its owner does not run, a Deployment's strategy, a Job's
backoffLimit and selector, a CronJob's schedule (robfig/cron v3's standard parser), concurrencyPolicy and
jobTemplate, a DaemonSet's and a StatefulSet's updateStrategy, the apps kinds' minReadySeconds, revisionHistoryLimit
and progressDeadlineSeconds, a PDB's spec and name, a pod template's rules whatever number of pods it makes. Then the
forms they accept, the pods phalanx refuses to expand (more than MAX_EXPANDED_PODS), and a StatefulSet whose long
name keeps upstream's controller from making pods.
Each case changes one field of a valid manifest; the expected text is written out by hand."""
from __future__ import annotations

import copy

import pytest
import yaml

from phalanx.cluster_models import InputError, Job, load_text
from phalanx.cluster_models.controllers import expand_controllers
from phalanx.cluster_models.jobs import PodBudget
from phalanx.sched import Cluster


def template(restart_policy: str | None = None) -> dict:
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
            **({"restartPolicy": restart_policy} if restart_policy else {})}
    return {"metadata": {"labels": {"app": "web"}}, "spec": spec}


def apps(kind: str, name: str = "web", **spec) -> dict:
    body = {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template()}
    if kind == "DaemonSet":
        del body["replicas"]
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": {**body, **spec}}


RC = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "web"},
      "spec": {"replicas": 2, "selector": {"app": "web"}, "template": template()}}
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
       "spec": {"template": template("Never")}}
CRON_JOB = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": template("OnFailure")}}}}
PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
       "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}


def changed(obj: dict, path: list, value) -> dict:
    """A copy of `obj` with the field at `path` set to `value` (removed when `value` is DELETE)."""
    out = copy.deepcopy(obj)
    at = out
    for key in path[:-1]:
        at = at[key]
    if value is DELETE:
        del at[path[-1]]
    else:
        at[path[-1]] = value
    return out


DELETE = object()
RESTART = ["spec", "template", "spec", "restartPolicy"]
STRATEGY = ["spec", "strategy"]
UPDATE_STRATEGY = ["spec", "updateStrategy"]
JOB_TEMPLATE = ["spec", "jobTemplate", "spec"]
CONTAINERS = ["spec", "template", "spec", "containers"]
IMAGE_PATH = [*CONTAINERS, 0, "image"]
SPREAD_PATH = ["spec", "template", "spec", "topologySpreadConstraints"]
SPREAD_APP = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["app"]}


def cluster(*docs) -> Cluster:
    """The objects loaded and expanded, as `phalanx schedule` does."""
    return Cluster.from_objects(load_text("---\n".join(yaml.safe_dump(d) for d in docs), "c.yaml"))


def schedule(text: str) -> dict:
    return changed(CRON_JOB, ["spec", "schedule"], text)


CASES = [
    # 1. the pod template's restartPolicy: Always for every controller but a Job
    ("Deployment restartPolicy Never", changed(apps("Deployment"), RESTART, "Never"),
     'Deployment default/web: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
     '"Always"'),
    ("ReplicaSet restartPolicy OnFailure", changed(apps("ReplicaSet"), RESTART, "OnFailure"),
     'ReplicaSet default/web: spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: '
     '"Always"'),
    ("ReplicationController restartPolicy Never", changed(RC, RESTART, "Never"),
     'ReplicationController default/web: spec.template.spec.restartPolicy: Unsupported value: "Never": supported '
     'values: "Always"'),
    ("StatefulSet restartPolicy OnFailure", changed(apps("StatefulSet"), RESTART, "OnFailure"),
     'StatefulSet default/web: spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: '
     '"Always"'),
    ("DaemonSet restartPolicy Never", changed(apps("DaemonSet"), RESTART, "Never"),
     'DaemonSet default/web: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
     '"Always"'),
    # 2. a Job's: OnFailure or Never; unset is defaulted to Always, which validateJobSpec calls a missing value
    ("Job without restartPolicy", changed(JOB, RESTART, DELETE),
     'Job default/j: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'),
    ("Job restartPolicy Always", changed(JOB, RESTART, "Always"),
     'Job default/j: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'),
    ("CronJob template without restartPolicy", changed(CRON_JOB, [*JOB_TEMPLATE, "template", "spec", "restartPolicy"],
                                                       DELETE),
     'CronJob default/nightly: spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: '
     '"OnFailure", "Never"'),
    # 3. a Deployment's strategy, as defaulted (RollingUpdate, 25% and 25%)
    ("strategy type Blue", changed(apps("Deployment"), STRATEGY, {"type": "Blue"}),
     'Deployment default/web: spec.strategy: Unsupported value: {"Type":"Blue","RollingUpdate":null}: supported '
     'values: "Recreate", "RollingUpdate"'),
    ("maxUnavailable and maxSurge both 0", changed(apps("Deployment"), STRATEGY, {
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}),
     "Deployment default/web: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when "
     "`maxSurge` is 0"),
    ("maxUnavailable and maxSurge both 0%", changed(apps("Deployment"), STRATEGY, {
        "rollingUpdate": {"maxUnavailable": "0%", "maxSurge": "0%"}}),
     'Deployment default/web: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when '
     "`maxSurge` is 0"),
    ("maxUnavailable over 100%", changed(apps("Deployment"), STRATEGY, {"rollingUpdate": {"maxUnavailable": "110%"}}),
     'Deployment default/web: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "110%": must not be '
     "greater than 100%"),
    ("maxSurge not a percentage", changed(apps("Deployment"), STRATEGY, {"rollingUpdate": {"maxSurge": "5"}}),
     'Deployment default/web: spec.strategy.rollingUpdate.maxSurge: Invalid value: "5": a valid percent string '
     "must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
     "'[0-9]+%')"),
    ("negative maxUnavailable", changed(apps("Deployment"), STRATEGY, {"rollingUpdate": {"maxUnavailable": -1}}),
     "Deployment default/web: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: -1: must be greater than "
     "or equal to 0"),
    ("rollingUpdate with Recreate", changed(apps("Deployment"), STRATEGY, {"type": "Recreate", "rollingUpdate": {}}),
     "Deployment default/web: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is "
     "'Recreate'"),
    # 4. a Job's backoffLimit and selector
    ("negative backoffLimit", changed(JOB, ["spec", "backoffLimit"], -1),
     "Job default/j: spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"),
    ("selector without manualSelector", changed(JOB, ["spec", "selector"], {"matchLabels": {"app": "web"}}),
     'Job default/j: spec.selector: Invalid value: {"matchLabels":{"app":"web"}}: `selector` not auto-generated'),
    ("manualSelector without selector", changed(JOB, ["spec", "manualSelector"], True),
     "Job default/j: spec.selector: Required value"),
    ("manualSelector with a selector the template does not match",
     changed(changed(JOB, ["spec", "manualSelector"], True), ["spec", "selector"], {"matchLabels": {"app": "db"}}),
     'Job default/j: spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match '
     "template `labels`"),
    # 5. a CronJob's schedule (robfig/cron v3 ParseStandard's errors), concurrencyPolicy and jobTemplate
    ("minute 61", schedule("61 * * * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61'),
    ("four fields", schedule("0 0 * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "0 0 * *": expected exactly 5 fields, found 4: '
     "[0 0 * *]"),
    ("day of month 0", schedule("0 0 0 * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "0 0 0 * *": beginning of range (0) below minimum (1): '
     "0"),
    ("weekday 7", schedule("0 0 * * 7"),
     'CronJob default/nightly: spec.schedule: Invalid value: "0 0 * * 7": end of range (7) above maximum (6): 7'),
    ("a range backwards", schedule("0 5-1 * * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "0 5-1 * * *": beginning of range (5) beyond end of '
     "range (1): 5-1"),
    ("step 0", schedule("*/0 * * * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "*/0 * * * *": step of range should be a positive '
     "number: */0"),
    ("two hyphens", schedule("1-2-3 * * * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "1-2-3 * * * *": too many hyphens: 1-2-3'),
    ("two slashes", schedule("1/2/3 * * * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "1/2/3 * * * *": too many slashes: 1/2/3'),
    ("a word", schedule("0 noon * * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "0 noon * * *": failed to parse int from noon: '
     'strconv.Atoi: parsing "noon": invalid syntax'),
    ("a negative step", schedule("*/-5 * * * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "*/-5 * * * *": negative number (-5) not allowed: -5'),
    ("an unknown descriptor", schedule("@fortnightly"),
     'CronJob default/nightly: spec.schedule: Invalid value: "@fortnightly": unrecognized descriptor: @fortnightly'),
    ("@every in days", schedule("@every 1d"),
     'CronJob default/nightly: spec.schedule: Invalid value: "@every 1d": failed to parse duration @every 1d: '
     'time: unknown unit "d" in duration "1d"'),
    ("CRON_TZ in the schedule", schedule("CRON_TZ=UTC 0 3 * * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "CRON_TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in '
     "schedule, use timeZone field instead"),
    ("TZ with an unknown zone", schedule("TZ=Mars/Olympus 0 3 * * *"),
     'CronJob default/nightly: spec.schedule: Invalid value: "TZ=Mars/Olympus 0 3 * * *": provided bad location '
     "Mars/Olympus: unknown time zone Mars/Olympus"),
    ("an empty schedule", schedule(""), "CronJob default/nightly: spec.schedule: Required value"),
    ("concurrencyPolicy Sometimes", changed(CRON_JOB, ["spec", "concurrencyPolicy"], "Sometimes"),
     'CronJob default/nightly: spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", '
     '"Forbid", "Replace"'),
    ("a jobTemplate selector", changed(CRON_JOB, [*JOB_TEMPLATE, "selector"], {"matchLabels": {"app": "web"}}),
     'CronJob default/nightly: spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"app":"web"}}: '
     "`selector` will be auto-generated"),
    ("a jobTemplate manualSelector", changed(CRON_JOB, [*JOB_TEMPLATE, "manualSelector"], True),
     'CronJob default/nightly: spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: '
     '"nil", "false"'),
    ("a negative jobTemplate backoffLimit", changed(CRON_JOB, [*JOB_TEMPLATE, "backoffLimit"], -2),
     "CronJob default/nightly: spec.jobTemplate.spec.backoffLimit: Invalid value: -2: must be greater than or equal "
     "to 0"),
    # 6. a PodDisruptionBudget's unhealthyPodEvictionPolicy
    ("unhealthyPodEvictionPolicy Never", changed(PDB, ["spec", "unhealthyPodEvictionPolicy"], "Never"),
     'PodDisruptionBudget default/pdb: spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported '
     'values: "AlwaysAllow", "IfHealthyBudget"'),
    # A PDB's spec (ValidatePodDisruptionBudgetSpec, in its order: both set, then each amount, the selector, the
    # policy); "both set" shows the internal PodDisruptionBudgetSpec struct as JSON (Go field names).
    ("minAvailable and maxUnavailable both set", changed(changed(changed(
        PDB, ["spec", "minAvailable"], "150%"), ["spec", "maxUnavailable"], 1), ["spec", "unhealthyPodEvictionPolicy"],
        "AlwaysAllow"),
     'PodDisruptionBudget default/pdb: spec: Invalid value: {"MinAvailable":"150%","Selector":{"matchLabels":'
     '{"app":"web"}},"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":"AlwaysAllow"}: minAvailable and '
     "maxUnavailable cannot be both set"),
    ("minAvailable over 100%", changed(PDB, ["spec", "minAvailable"], "150%"),
     'PodDisruptionBudget default/pdb: spec.minAvailable: Invalid value: "150%": must not be greater than 100%'),
    ("maxUnavailable not a percentage", changed(changed(PDB, ["spec", "minAvailable"], DELETE),
                                                ["spec", "maxUnavailable"], "five"),
     'PodDisruptionBudget default/pdb: spec.maxUnavailable: Invalid value: "five": a valid percent string must be a '
     "numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"),
    ("a negative minAvailable", changed(PDB, ["spec", "minAvailable"], -1),
     "PodDisruptionBudget default/pdb: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
    ("a PDB selector In without values", changed(PDB, ["spec", "selector"],
                                                 {"matchExpressions": [{"key": "app", "operator": "In"}]}),
     "PodDisruptionBudget default/pdb: spec.selector.matchExpressions[0].values: Required value: must be specified "
     "when `operator` is 'In' or 'NotIn'"),
    # 7. a PDB's name: ValidatePodDisruptionBudget checks none; the API server's generic ValidateObjectMetaAccessor
    # after it takes any path segment (path.ValidatePathSegmentName), so only ".", ".." and '/' or '%' are refused,
    # and a spec error is reported first
    ("a PDB name with a slash", changed(PDB, ["metadata", "name"], "team/a"),
     "PodDisruptionBudget default/team/a: metadata.name: Invalid value: \"team/a\": may not contain '/'"),
    ("a PDB name with a percent sign", changed(PDB, ["metadata", "name"], "50%"),
     "PodDisruptionBudget default/50%: metadata.name: Invalid value: \"50%\": may not contain '%'"),
    ("a PDB named ..", changed(PDB, ["metadata", "name"], ".."),
     "PodDisruptionBudget default/..: metadata.name: Invalid value: \"..\": may not be '..'"),
    ("a PDB name with a slash and a bad spec", changed(changed(PDB, ["metadata", "name"], "/x"),
                                                      ["spec", "minAvailable"], -1),
     "PodDisruptionBudget default//x: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
    # A DaemonSet's updateStrategy (ValidateDaemonSetUpdateStrategy after SetDefaults_DaemonSet: type
    # RollingUpdate, maxUnavailable 1, maxSurge 0); the bad value of an unknown type is the internal
    # DaemonSetUpdateStrategy struct as JSON, an unset IntOrString of its RollingUpdateDaemonSet 0
    ("a DaemonSet updateStrategy type Blue", changed(apps("DaemonSet"), UPDATE_STRATEGY, {"type": "Blue"}),
     'DaemonSet default/web: spec.updateStrategy: Unsupported value: {"Type":"Blue","RollingUpdate":null}: supported '
     'values: "RollingUpdate", "OnDelete"'),
    ("a DaemonSet updateStrategy type Blue with a rollingUpdate",
     changed(apps("DaemonSet"), UPDATE_STRATEGY, {"type": "Blue", "rollingUpdate": {"maxSurge": "5%"}}),
     'DaemonSet default/web: spec.updateStrategy: Unsupported value: {"Type":"Blue","RollingUpdate":'
     '{"MaxUnavailable":0,"MaxSurge":"5%"}}: supported values: "RollingUpdate", "OnDelete"'),
    ("a DaemonSet maxUnavailable not a percentage",
     changed(apps("DaemonSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavailable": "\u00c4"}}),
     'DaemonSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "\u00c4": a valid '
     "percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for "
     "validation is '[0-9]+%')"),
    ("a negative DaemonSet maxSurge",
     changed(apps("DaemonSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxSurge": -1}}),
     "DaemonSet default/web: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or "
     "equal to 0"),
    ("a DaemonSet maxSurge over 100%",
     changed(apps("DaemonSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "101%"}}),
     'DaemonSet default/web: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "101%": must not be greater '
     "than 100%"),
    ("a DaemonSet maxSurge beside the default maxUnavailable",
     changed(apps("DaemonSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxSurge": 1}}),
     "DaemonSet default/web: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when "
     "maxUnavailable is non-zero"),
    ("DaemonSet maxUnavailable 0 and the default maxSurge",
     changed(apps("DaemonSet"), UPDATE_STRATEGY, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}),
     "DaemonSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when "
     "maxSurge is 0"),
    ("DaemonSet maxUnavailable and maxSurge both 0%",
     changed(apps("DaemonSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavailable": "0%", "maxSurge": "0%"}}),
     "DaemonSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when "
     "maxSurge is 0"),
    # ... decoded strictly first (phalanx's decoding messages): an object, a string type, int32-or-string amounts
    ("a DaemonSet updateStrategy that is a string", changed(apps("DaemonSet"), UPDATE_STRATEGY, "RollingUpdate"),
     'DaemonSet default/web: spec.updateStrategy: input should be a valid dictionary or instance of '
     'DaemonSetUpdateStrategy (got "RollingUpdate")'),
    ("a DaemonSet rollingUpdate that is a list",
     changed(apps("DaemonSet"), UPDATE_STRATEGY, {"rollingUpdate": [{"maxUnavailable": 1}]}),
     "DaemonSet default/web: spec.updateStrategy.rollingUpdate: input should be a valid dictionary or instance of "
     "RollingUpdateDaemonSet"),
    ("a DaemonSet updateStrategy type that is a number", changed(apps("DaemonSet"), UPDATE_STRATEGY, {"type": 1}),
     "DaemonSet default/web: spec.updateStrategy.type: input should be a valid string (got 1)"),
    ("a DaemonSet maxUnavailable past int32",
     changed(apps("DaemonSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavailable": 2147483648}}),
     "DaemonSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: input should be an int32 or a string "
     "(got 2147483648)"),
    # A StatefulSet's updateStrategy (ValidateStatefulSetSpec and validateRollingUpdateStatefulSet after
    # SetDefaults_StatefulSet: an unset type is RollingUpdate with a rollingUpdate of partition 0 and, the
    # MaxUnavailableStatefulSet gate on by default since v1.35, maxUnavailable 1); the bad values are the internal
    # structs as JSON, an unset Partition (an int32 there) 0
    ("a StatefulSet updateStrategy type Blue", changed(apps("StatefulSet"), UPDATE_STRATEGY, {"type": "Blue"}),
     'StatefulSet default/web: spec.updateStrategy: Invalid value: {"Type":"Blue","RollingUpdate":null}: must be '
     "'RollingUpdate' or 'OnDelete'"),
    ("a StatefulSet updateStrategy type Blue with a rollingUpdate",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"type": "Blue", "rollingUpdate": {"maxUnavailable": 2}}),
     'StatefulSet default/web: spec.updateStrategy: Invalid value: {"Type":"Blue","RollingUpdate":{"Partition":0,'
     '"MaxUnavailable":2}}: must be \'RollingUpdate\' or \'OnDelete\''),
    ("a StatefulSet rollingUpdate beside OnDelete",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"type": "OnDelete", "rollingUpdate": {}}),
     'StatefulSet default/web: spec.updateStrategy.rollingUpdate: Invalid value: {"Partition":0,"MaxUnavailable":'
     "null}: only allowed for updateStrategy 'RollingUpdate'"),
    ("a StatefulSet rollingUpdate with a partition and maxUnavailable beside OnDelete",
     changed(apps("StatefulSet"), UPDATE_STRATEGY,
             {"type": "OnDelete", "rollingUpdate": {"partition": 2, "maxUnavailable": "50%"}}),
     'StatefulSet default/web: spec.updateStrategy.rollingUpdate: Invalid value: {"Partition":2,"MaxUnavailable":'
     "\"50%\"}: only allowed for updateStrategy 'RollingUpdate'"),
    ("a negative StatefulSet partition",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"rollingUpdate": {"partition": -1, "maxUnavailable": 0}}),
     "StatefulSet default/web: spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than "
     "or equal to 0"),
    ("a StatefulSet maxUnavailable 0",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}),
     "StatefulSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: cannot be 0"),
    ("a StatefulSet maxUnavailable 0%",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavailable": "0%"}}),
     'StatefulSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "0%": cannot be 0'),
    ("a negative StatefulSet maxUnavailable",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavailable": -2}}),
     "StatefulSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: -2: must be greater "
     "than or equal to 0"),
    ("a StatefulSet maxUnavailable not a percentage",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavailable": "two"}}),
     'StatefulSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "two": a valid '
     "percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for "
     "validation is '[0-9]+%')"),
    ("a StatefulSet maxUnavailable over 100%",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavailable": "150%"}}),
     'StatefulSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be '
     "greater than 100%"),
    # ... checked before the selector (upstream's order), and decoded strictly
    ("a StatefulSet updateStrategy type Blue and no selector",
     changed(changed(apps("StatefulSet"), UPDATE_STRATEGY, {"type": "Blue"}), ["spec", "selector"], {}),
     'StatefulSet default/web: spec.updateStrategy: Invalid value: {"Type":"Blue","RollingUpdate":null}: must be '
     "'RollingUpdate' or 'OnDelete'"),
    ("a StatefulSet updateStrategy that is a string", changed(apps("StatefulSet"), UPDATE_STRATEGY, "OnDelete"),
     'StatefulSet default/web: spec.updateStrategy: input should be a valid dictionary or instance of '
     'StatefulSetUpdateStrategy (got "OnDelete")'),
    ("a StatefulSet partition that is a string",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"rollingUpdate": {"partition": "1"}}),
     'StatefulSet default/web: spec.updateStrategy.rollingUpdate.partition: input should be a valid integer (got '
     '"1")'),
    ("a StatefulSet partition past int32",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"rollingUpdate": {"partition": 2147483648}}),
     "StatefulSet default/web: spec.updateStrategy.rollingUpdate.partition: input should be less than or equal to "
     "2147483647 (got 2147483648)"),
    ("a StatefulSet maxUnavailable that is a float",
     changed(apps("StatefulSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavailable": 1.5}}),
     "StatefulSet default/web: spec.updateStrategy.rollingUpdate.maxUnavailable: input should be an int32 or a "
     "string (got 1.5)"),
    # The apps kinds' other non-negative fields (ValidateNonnegativeField), in upstream's order: a ReplicaSet's and a
    # StatefulSet's minReadySeconds before the selector; a Deployment's minReadySeconds, revisionHistoryLimit and
    # progressDeadlineSeconds (600 when unset, SetDefaults_Deployment) after its strategy, progressDeadlineSeconds
    # then greater than minReadySeconds; a DaemonSet's minReadySeconds before its updateStrategy, its
    # revisionHistoryLimit after
    ("a negative ReplicaSet minReadySeconds", changed(apps("ReplicaSet"), ["spec", "minReadySeconds"], -1),
     "ReplicaSet default/web: spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"),
    ("a negative ReplicaSet minReadySeconds and no selector",
     changed(changed(apps("ReplicaSet"), ["spec", "minReadySeconds"], -1), ["spec", "selector"], {}),
     "ReplicaSet default/web: spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"),
    ("a negative StatefulSet minReadySeconds", changed(apps("StatefulSet"), ["spec", "minReadySeconds"], -5),
     "StatefulSet default/web: spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0"),
    ("a negative Deployment minReadySeconds", changed(apps("Deployment"), ["spec", "minReadySeconds"], -1),
     "Deployment default/web: spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"),
    ("a Deployment strategy type Blue and a negative minReadySeconds",
     changed(changed(apps("Deployment"), STRATEGY, {"type": "Blue"}), ["spec", "minReadySeconds"], -1),
     'Deployment default/web: spec.strategy: Unsupported value: {"Type":"Blue","RollingUpdate":null}: supported '
     'values: "Recreate", "RollingUpdate"'),
    ("a negative Deployment revisionHistoryLimit", changed(apps("Deployment"), ["spec", "revisionHistoryLimit"], -1),
     "Deployment default/web: spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"),
    ("a negative Deployment progressDeadlineSeconds",
     changed(apps("Deployment"), ["spec", "progressDeadlineSeconds"], -1),
     "Deployment default/web: spec.progressDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0"),
    ("a Deployment progressDeadlineSeconds 0", changed(apps("Deployment"), ["spec", "progressDeadlineSeconds"], 0),
     "Deployment default/web: spec.progressDeadlineSeconds: Invalid value: 0: must be greater than minReadySeconds"),
    ("a Deployment progressDeadlineSeconds equal to minReadySeconds",
     changed(changed(apps("Deployment"), ["spec", "progressDeadlineSeconds"], 30), ["spec", "minReadySeconds"], 30),
     "Deployment default/web: spec.progressDeadlineSeconds: Invalid value: 30: must be greater than minReadySeconds"),
    ("a Deployment minReadySeconds of the default progressDeadlineSeconds",
     changed(apps("Deployment"), ["spec", "minReadySeconds"], 600),
     "Deployment default/web: spec.progressDeadlineSeconds: Invalid value: 600: must be greater than "
     "minReadySeconds"),
    ("a negative DaemonSet minReadySeconds", changed(apps("DaemonSet"), ["spec", "minReadySeconds"], -1),
     "DaemonSet default/web: spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"),
    ("a negative DaemonSet minReadySeconds and a bad updateStrategy",
     changed(changed(apps("DaemonSet"), ["spec", "minReadySeconds"], -1), UPDATE_STRATEGY, {"type": "Blue"}),
     "DaemonSet default/web: spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"),
    ("a negative DaemonSet revisionHistoryLimit", changed(apps("DaemonSet"), ["spec", "revisionHistoryLimit"], -1),
     "DaemonSet default/web: spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"),
    ("a DaemonSet minReadySeconds that is a string", changed(apps("DaemonSet"), ["spec", "minReadySeconds"], "5"),
     'DaemonSet default/web: spec.minReadySeconds: input should be a valid integer (got "5")'),
    ("a Deployment revisionHistoryLimit past int32",
     changed(apps("Deployment"), ["spec", "revisionHistoryLimit"], 2147483648),
     "Deployment default/web: spec.revisionHistoryLimit: input should be less than or equal to 2147483647 (got "
     "2147483648)"),
    # getIntOrPercentValue reads a percentage with strconv.Atoi, which clamps a number past int64 to its maximum
    # (not 0): the Deployment's maxUnavailable is then over 100%, not 0
    ("a Deployment maxUnavailable of twenty digits", changed(apps("Deployment"), STRATEGY, {
        "rollingUpdate": {"maxUnavailable": "99999999999999999999%", "maxSurge": 0}}),
     'Deployment default/web: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "99999999999999999999%": '
     "must not be greater than 100%"),
    # 8. counts the API takes (int32) and phalanx does not expand: checked before any pod is made
    ("two billion Deployment replicas", changed(apps("Deployment"), ["spec", "replicas"], 2147483647),
     "Deployment default/web: spec.replicas: 2147483647 pods: more than phalanx expands (10000000)"),
    ("two billion StatefulSet replicas", changed(apps("StatefulSet"), ["spec", "replicas"], 2147483647),
     "StatefulSet default/web: spec.replicas: 2147483647 pods: more than phalanx expands (10000000)"),
    ("two billion ReplicationController replicas", changed(RC, ["spec", "replicas"], 2147483647),
     "ReplicationController default/web: spec.replicas: 2147483647 pods: more than phalanx expands (10000000)"),
    # A template's image may have surrounding whitespace (validateContainerOnlyForPod is for pods only), but the pods
    # made from it may not: the controller's pods are refused, naming the object that makes them.
    ("pods of a Deployment's image with a space", changed(apps("Deployment"), [*IMAGE_PATH], " nginx"),
     'ReplicaSet default/web-7ks4c49nfk: spec.template.spec.containers[0].image: Invalid value: " nginx": must not '
     "have leading or trailing whitespace"),
    ("pods of a Job's image with a newline", changed(JOB, [*IMAGE_PATH], "busybox\n"),
     'Job default/j: spec.template.spec.containers[0].image: Invalid value: "busybox\\n": must not have leading or '
     "trailing whitespace"),
    ("pods of a StatefulSet's image with a space", changed(apps("StatefulSet", "db"), [*IMAGE_PATH], "nginx "),
     'StatefulSet default/db: spec.template.spec.containers[0].image: Invalid value: "nginx ": must not have leading '
     "or trailing whitespace"),
    # A template's spread matchLabelKeys are validated as written; each pod's, merged with its labels, when the
    # controller creates it (v1.36 MatchLabelKeysInPodTopologySpreadSelectorMerge).
    ("pods whose matchLabelKeys key is in matchLabels", changed(apps("Deployment"), [*SPREAD_PATH], [SPREAD_APP]),
     'ReplicaSet default/web-6h4lmzg25t: spec.template.spec.topologySpreadConstraints[0][0]: Invalid value: "app": '
     "exists in both matchLabelKeys and labelSelector"),
    ("a Job's pods whose matchLabelKeys key is in matchLabels", changed(JOB, [*SPREAD_PATH], [SPREAD_APP]),
     'Job default/j: spec.template.spec.topologySpreadConstraints[0][0]: Invalid value: "app": exists in both '
     "matchLabelKeys and labelSelector"),
    ("two billion Job parallelism", changed(JOB, ["spec", "parallelism"], 2147483647),
     "Job default/j: spec.parallelism: 2147483647 pods: more than phalanx expands (10000000)"),
    ("completions below a huge parallelism", changed(changed(JOB, ["spec", "parallelism"], 2147483647),
                                                     ["spec", "completions"], 20000000),
     "Job default/j: spec.completions: 20000000 pods: more than phalanx expands (10000000)"),
    ("a CronJob's huge parallelism", changed(CRON_JOB, [*JOB_TEMPLATE, "parallelism"], 20000000),
     "CronJob default/nightly: spec.jobTemplate.spec.parallelism: 20000000 pods: more than phalanx expands "
     "(10000000)"),
    # 9. the pod template's own rules (ValidatePodTemplateSpec), checked when the object is created, whatever number
    # of pods it makes: here none
    ("a Deployment of no replicas with a bad container name",
     changed(changed(apps("Deployment"), ["spec", "replicas"], 0), [*CONTAINERS, 0, "name"], "Web_1"),
     "Deployment default/web: spec.template.spec.containers[0].name: must be a DNS label: lowercase letters, digits "
     "and '-', starting and ending with a letter or digit (got \"Web_1\")"),
    ("a ReplicaSet of no replicas with a container name twice",
     changed(changed(apps("ReplicaSet"), ["spec", "replicas"], 0), CONTAINERS,
             [{"name": "c", "image": "a"}, {"name": "c", "image": "b"}]),
     'ReplicaSet default/web: spec.template.spec.containers[1].name: Duplicate value: "c"'),
    ("a ReplicationController of no replicas with a request above its limit",
     changed(changed(RC, ["spec", "replicas"], 0), [*CONTAINERS, 0, "resources"],
             {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
     'ReplicationController default/web: spec.template.spec.containers[0].resources.requests: Invalid value: "2": '
     "must be less than or equal to cpu limit of 1"),
    ("a StatefulSet of no replicas with an init container restartPolicy Never",
     changed(changed(apps("StatefulSet"), ["spec", "replicas"], 0), ["spec", "template", "spec", "initContainers"],
             [{"name": "i", "image": "a", "restartPolicy": "Never"}]),
     'StatefulSet default/web: spec.template.spec.initContainers[0].restartPolicy: Unsupported value: "Never": '
     'supported values: "Always"'),
    ("a DaemonSet on no node with an Exists toleration's value",
     changed(changed(apps("DaemonSet"), ["spec", "template", "spec", "nodeSelector"], {"pool": "none"}),
             ["spec", "template", "spec", "tolerations"], [{"key": "k", "operator": "Exists", "value": "v"}]),
     'DaemonSet default/web: spec.template.spec.tolerations[0].operator: Invalid value: "v": value must be empty '
     "when `operator` is 'Exists'"),
    ("a Job of parallelism 0 with a schedulingGroup naming no PodGroup",
     changed(changed(JOB, ["spec", "parallelism"], 0), ["spec", "template", "spec", "schedulingGroup"], {}),
     "Job default/j: spec.template.spec.schedulingGroup.podGroupName: Invalid value: null: must specify one of: "
     "`podGroupName`"),
    ("a suspended CronJob with an empty podGroupName",
     changed(changed(CRON_JOB, ["spec", "suspend"], True), [*JOB_TEMPLATE, "template", "spec", "schedulingGroup"],
             {"podGroupName": ""}),
     'CronJob default/nightly: spec.jobTemplate.spec.template.spec.schedulingGroup.podGroupName: Invalid value: "": '
     "must not be empty"),
    # A CronJob's template is its own field, as upstream's ValidateCronJob names it (validateJobSpec on
    # spec.jobTemplate.spec): the CronJob is refused, not the Job it would make.
    ("a CronJob's template with a bad container name",
     changed(CRON_JOB, [*JOB_TEMPLATE, "template", "spec", "containers", 0, "name"], "Nightly_Run"),
     "CronJob default/nightly: spec.jobTemplate.spec.template.spec.containers[0].name: must be a DNS label: "
     "lowercase letters, digits and '-', starting and ending with a letter or digit (got \"Nightly_Run\")"),
]


@pytest.mark.parametrize("doc, message", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_rejected_with_one_line_naming_the_object_and_field(doc, message):
    with pytest.raises(InputError) as caught:
        cluster(doc)
    assert str(caught.value) == message


def test_the_pod_budget_counts_what_came_before():
    budget = PodBudget(9_999_999)
    budget.take(1, "Job default/a", "spec.parallelism")
    with pytest.raises(InputError) as caught:
        budget.take(2, "Job default/b", "spec.parallelism")
    assert str(caught.value) == ("Job default/b: spec.parallelism: 2 pods, 10000002 in all: more than phalanx expands "
                                 "(10000000)")


# ---- what the API server accepts still loads ---------------------------------------------------------------------

def test_restart_policy_unset_or_always_on_controllers_and_on_failure_or_never_on_jobs():
    docs = [apps("Deployment"), changed(apps("Deployment", "explicit"), RESTART, "Always"), apps("ReplicaSet", "rs"),
            RC, apps("StatefulSet", "db"), changed(JOB, RESTART, "OnFailure"),
            changed(changed(JOB, ["metadata", "name"], "k"), RESTART, "Never"), CRON_JOB]
    # two pods each from the Deployments, the ReplicaSet and the ReplicationController; the StatefulSet's first
    # (its second waits for it: OrderedReady); one each from the Jobs and the CronJob's Job
    assert len(cluster(*docs).pending) == 12


def test_a_template_image_with_whitespace_loads_when_no_pod_is_made():
    """validateContainersOnlyForPod is for pods only: the API server takes the template, and with no pod to make
    (no replicas, no node to run on, parallelism 0, a suspended CronJob) nothing is refused."""
    def spaced(doc: dict, path: list = IMAGE_PATH) -> dict:
        return changed(doc, path, " nginx ")
    none = ["spec", "replicas"]
    docs = [spaced(changed(apps("Deployment"), none, 0)), spaced(changed(apps("ReplicaSet", "rs"), none, 0)),
            spaced(changed(RC, none, 0)), spaced(changed(apps("StatefulSet", "db"), none, 0)),
            spaced(changed(apps("DaemonSet", "ds"), ["spec", "template", "spec", "nodeSelector"], {"pool": "none"})),
            spaced(changed(JOB, ["spec", "parallelism"], 0)),
            spaced(changed(CRON_JOB, ["spec", "suspend"], True), [*JOB_TEMPLATE, "template", "spec", "containers", 0,
                                                                  "image"])]
    state = cluster(*docs)
    assert state.pending == [] and [j.key for j in state.jobs] == ["default/j"]


def test_a_job_built_in_python_needs_no_restart_policy():
    # As with containers and their images (load.manifest_problem), an unset restartPolicy is a manifest check only.
    job = Job.model_validate({"metadata": {"name": "j"},
                              "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}})
    assert job.spec.template.spec.restart_policy is None


@pytest.mark.parametrize("strategy", [
    {}, {"type": "Recreate"}, {"type": "RollingUpdate"}, {"rollingUpdate": {"maxUnavailable": 0}},
    {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}, {"rollingUpdate": {"maxSurge": "100%",
                                                                               "maxUnavailable": "100%"}},
    {"type": "Recreate", "rollingUpdate": None},
])
def test_deployment_strategies_the_api_server_takes(strategy):
    assert len(cluster(changed(apps("Deployment"), STRATEGY, strategy)).pending) == 2


def test_job_selectors_the_api_server_takes():
    manual = changed(changed(JOB, ["spec", "manualSelector"], True), ["spec", "selector"],
                     {"matchLabels": {"app": "web"}})
    generated = changed(changed(JOB, ["metadata", "name"], "k"), ["spec", "selector"],
                        {"matchLabels": {"batch.kubernetes.io/job-name": "k"}})
    assert [j.key for j in cluster(manual, generated).jobs] == ["default/j", "default/k"]


def test_an_indexed_job_with_neither_count_is_valid():
    job = changed(JOB, ["spec", "completionMode"], "Indexed")
    assert [p.metadata.name for p in cluster(job).pending] == ["j-0"]


@pytest.mark.parametrize("text", [
    "0 3 * * *", "*/15 * * * *", "0 0 1-15/2 * *", "5/10 * * * *", "0,30 9-17 * * *", "0 9 * * MON-FRI",
    "0 0 1 jan,Jul *", "30 2 ? * sun", "0 0 31 DEC SAT", ", * * * *",
    "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "@every 1h30m", "@every 1.5s",
])
def test_schedules_the_standard_parser_takes(text):
    assert [j.metadata.name for j in cluster(schedule(text)).jobs] == ["nightly-0"]


@pytest.mark.parametrize("policy", ["Allow", "Forbid", "Replace"])
def test_concurrency_policies(policy):
    assert len(cluster(changed(CRON_JOB, ["spec", "concurrencyPolicy"], policy)).jobs) == 1


@pytest.mark.parametrize("strategy", [
    {}, {"type": "RollingUpdate"}, {"type": "OnDelete"}, {"type": "RollingUpdate", "rollingUpdate": None},
    {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}, {"rollingUpdate": {"maxUnavailable": "100%"}},
    {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "100%"}}, {"rollingUpdate": {"maxUnavailable": "0%",
                                                                                     "maxSurge": "25%"}},
    # OnDelete validates nothing else: a rollingUpdate beside it, however wrong, is kept unread
    {"type": "OnDelete", "rollingUpdate": {"maxUnavailable": "x", "maxSurge": -1}},
])
def test_daemon_set_update_strategies_the_api_server_takes(strategy):
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}]
    assert len(cluster(*nodes, changed(apps("DaemonSet"), UPDATE_STRATEGY, strategy)).pending) == 1


@pytest.mark.parametrize("strategy", [
    {}, {"type": "RollingUpdate"}, {"type": "OnDelete"}, {"type": "RollingUpdate", "rollingUpdate": None},
    {"type": "OnDelete", "rollingUpdate": None}, {"rollingUpdate": {}}, {"rollingUpdate": {"partition": 0}},
    {"rollingUpdate": {"partition": 5, "maxUnavailable": "100%"}}, {"rollingUpdate": {"maxUnavailable": 3}},
    {"rollingUpdate": {"partition": None, "maxUnavailable": None}},
])
def test_stateful_set_update_strategies_the_api_server_takes(strategy):
    doc = changed(apps("StatefulSet", podManagementPolicy="Parallel"), UPDATE_STRATEGY, strategy)
    assert len(cluster(doc).pending) == 2


@pytest.mark.parametrize("kind, spec", [
    ("ReplicaSet", {"minReadySeconds": 0}), ("ReplicaSet", {"minReadySeconds": 30}),
    ("StatefulSet", {"minReadySeconds": 10}),
    # ValidateStatefulSetSpec does not check revisionHistoryLimit
    ("StatefulSet", {"revisionHistoryLimit": -1}),
    ("Deployment", {"minReadySeconds": 599}), ("Deployment", {"minReadySeconds": 600, "progressDeadlineSeconds": 601}),
    ("Deployment", {"revisionHistoryLimit": 0, "progressDeadlineSeconds": 1}),
    ("DaemonSet", {"minReadySeconds": 5, "revisionHistoryLimit": 0}),
])
def test_non_negative_counts_the_api_server_takes(kind, spec):
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}]
    doc = apps(kind, **spec, **({"podManagementPolicy": "Parallel"} if kind == "StatefulSet" else {}))
    assert len(cluster(*nodes, doc).pending) == (1 if kind == "DaemonSet" else 2)


def test_an_unknown_field_of_a_stateful_set_update_strategy_is_reported():
    doc = changed(apps("StatefulSet"), UPDATE_STRATEGY, {"rollingUpdate": {"partiton": 1}})
    assert load_text(yaml.safe_dump(doc)).warnings == [
        'StatefulSet default/web: unknown field "spec.updateStrategy.rollingUpdate.partiton" (ignored; --strict '
        "makes it an error)"]


def test_an_unknown_field_of_an_update_strategy_is_reported():
    doc = changed(apps("DaemonSet"), UPDATE_STRATEGY, {"rollingUpdate": {"maxUnavalable": 1}})
    assert load_text(yaml.safe_dump(doc)).warnings == [
        'DaemonSet default/web: unknown field "spec.updateStrategy.rollingUpdate.maxUnavalable" (ignored; --strict '
        "makes it an error)"]
    with pytest.raises(InputError) as caught:
        load_text(yaml.safe_dump(doc), strict=True)
    assert str(caught.value) == 'DaemonSet default/web: unknown field "spec.updateStrategy.rollingUpdate.maxUnavalable"'


@pytest.mark.parametrize("name", ["UPPER", "under_score", "a..b", "-dash-", "x" * 300])
def test_pdb_names_the_api_server_takes(name):
    """Any path segment: ValidatePodDisruptionBudget has no name rule, and the API server's generic check refuses only
    ".", "..", '/' and '%' (kubernetes/kubernetes#57537 and #133726, which would have tightened it, were closed)."""
    assert cluster(changed(PDB, ["metadata", "name"], name)).pdbs[0].key == f"default/{name}"


@pytest.mark.parametrize("spec", [
    {"minAvailable": "100%"}, {"maxUnavailable": 0}, {"maxUnavailable": "0%"}, {"minAvailable": 0},
    {"selector": {"matchLabels": {"app": "web"}}}, {},
])
def test_pdb_specs_the_api_server_takes(spec):
    assert cluster(changed(PDB, ["spec"], spec)).pdbs[0].key == "default/pdb"


@pytest.mark.parametrize("policy", ["IfHealthyBudget", "AlwaysAllow"])
def test_unhealthy_pod_eviction_policies(policy):
    assert cluster(changed(PDB, ["spec", "unhealthyPodEvictionPolicy"], policy)).pdbs[0].key == "default/pdb"


def test_a_stateful_set_named_63_characters_loads_and_makes_no_pods_as_upstream():
    """The API server takes the name (a DNS label), but the controller-revision-hash label of its pods would be
    "<name>-<hash>", longer than a label value may be: upstream's controller fails to create every pod
    (kubernetes/kubernetes#64023)."""
    name = "s" * 63
    objects = load_text(yaml.safe_dump(apps("StatefulSet", name)))
    state = Cluster.from_objects(objects)
    [warning] = expand_controllers(objects.controllers, [], lambda ds: []).warnings
    assert state.pending == [] and state.warnings == [warning]       # the user is told
    assert warning.startswith(f"StatefulSet default/{name}: creates no pods: the API server refuses each, as its "
                              f'controller-revision-hash label value "{name}-')
    assert warning.endswith('" (the name and a hash) is longer than 63 characters (kubernetes/kubernetes#64023)')
    # 52 characters leave room for "-<hash>": the pods are made
    assert len(cluster(apps("StatefulSet", "s" * 52, podManagementPolicy="Parallel")).pending) == 2
