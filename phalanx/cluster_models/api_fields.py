"""The fields the Kubernetes API gives each object phalanx reads: the json names of k8s.io/api and
k8s.io/apimachinery v0.36.0 (the Go structs' json tags, inline members flattened), keyed by the phalanx model
class that reads that struct.

They tell a field phalanx ignores (a container's `image`, a Deployment's `strategy`) from one the API server
does not know (a typo: `requets`), which kubectl reports as `Warning: unknown field "..."` and refuses with
--validate=strict. Classes not listed here (phalanx's own, older versions) are not checked.
"""
from __future__ import annotations

# model class name -> (upstream "group/version.Struct", its json field names)
API_FIELDS: dict[str, tuple[str, str]] = {
    "Affinity": ("core/v1.Affinity", "nodeAffinity podAffinity podAntiAffinity"),
    "AllocationResult": ("resource/v1.AllocationResult", "allocationTimestamp devices nodeSelector"),
    "BasicSchedulingPolicy": ("scheduling/v1alpha2.BasicSchedulingPolicy", ""),
    "CELDeviceSelector": ("resource/v1.CELDeviceSelector", "expression"),
    "Container": ("core/v1.Container",
        "args command env envFrom image imagePullPolicy lifecycle livenessProbe name "
        "ports readinessProbe resizePolicy resources restartPolicy restartPolicyRules "
        "securityContext startupProbe stdin stdinOnce terminationMessagePath "
        "terminationMessagePolicy tty volumeDevices volumeMounts workingDir"),
    "ContainerPort": ("core/v1.ContainerPort", "containerPort hostIP hostPort name protocol"),
    "ContainerImage": ("core/v1.ContainerImage", "names sizeBytes"),
    "CronJob": ("batch/v1.CronJob", "apiVersion kind metadata spec status"),
    "CronJobSpec": ("batch/v1.CronJobSpec",
        "concurrencyPolicy failedJobsHistoryLimit jobTemplate schedule "
        "startingDeadlineSeconds successfulJobsHistoryLimit suspend timeZone"),
    "DaemonSet": ("apps/v1.DaemonSet", "apiVersion kind metadata spec status"),
    "DaemonSetSpec": ("apps/v1.DaemonSetSpec",
        "minReadySeconds revisionHistoryLimit selector template updateStrategy"),
    "DaemonSetUpdateStrategy": ("apps/v1.DaemonSetUpdateStrategy", "rollingUpdate type"),
    "Deployment": ("apps/v1.Deployment", "apiVersion kind metadata spec status"),
    "DeploymentSpec": ("apps/v1.DeploymentSpec",
        "minReadySeconds paused progressDeadlineSeconds replicas revisionHistoryLimit "
        "selector strategy template"),
    "DeploymentStrategy": ("apps/v1.DeploymentStrategy", "rollingUpdate type"),
    "Device": ("resource/v1.Device",
        "allNodes allowMultipleAllocations attributes bindingConditions "
        "bindingFailureConditions bindsToNode capacity consumesCounters name "
        "nodeAllocatableResourceMappings nodeName nodeSelector taints"),
    "DeviceAllocationResult": ("resource/v1.DeviceAllocationResult", "config results"),
    "DeviceAttribute": ("resource/v1.DeviceAttribute", "bool bools int ints string strings version versions"),
    "DeviceCapacity": ("resource/v1.DeviceCapacity", "requestPolicy value"),
    "DeviceClaim": ("resource/v1.DeviceClaim", "config constraints requests"),
    "DeviceClass": ("resource/v1.DeviceClass", "apiVersion kind metadata spec"),
    "DeviceClassSpec": ("resource/v1.DeviceClassSpec", "config extendedResourceName selectors"),
    "DeviceRequest": ("resource/v1.DeviceRequest", "exactly firstAvailable name"),
    "DeviceRequestAllocationResult": ("resource/v1.DeviceRequestAllocationResult",
        "adminAccess bindingConditions bindingFailureConditions consumedCapacity device "
        "driver pool request shareID tolerations"),
    "DeviceSelector": ("resource/v1.DeviceSelector", "cel"),
    "DeviceSubRequest": ("resource/v1.DeviceSubRequest",
        "allocationMode capacity count deviceClassName name selectors tolerations"),
    "ExactDeviceRequest": ("resource/v1.ExactDeviceRequest",
        "adminAccess allocationMode capacity count deviceClassName selectors tolerations"),
    "GangSchedulingPolicy": ("scheduling/v1alpha2.GangSchedulingPolicy", "minCount"),
    "Job": ("batch/v1.Job", "apiVersion kind metadata spec status"),
    "JobSpec": ("batch/v1.JobSpec",
        "activeDeadlineSeconds backoffLimit backoffLimitPerIndex completionMode "
        "completions managedBy manualSelector maxFailedIndexes parallelism "
        "podFailurePolicy podReplacementPolicy selector successPolicy suspend template "
        "ttlSecondsAfterFinished"),
    "JobTemplateSpec": ("batch/v1.JobTemplateSpec", "metadata spec"),
    "LabelSelector": ("meta/v1.LabelSelector", "matchExpressions matchLabels"),
    "LabelSelectorRequirement": ("meta/v1.LabelSelectorRequirement", "key operator values"),
    "Namespace": ("core/v1.Namespace", "apiVersion kind metadata spec status"),
    "Node": ("core/v1.Node", "apiVersion kind metadata spec status"),
    "NodeAffinity": ("core/v1.NodeAffinity",
        "preferredDuringSchedulingIgnoredDuringExecution "
        "requiredDuringSchedulingIgnoredDuringExecution"),
    "NodeSelector": ("core/v1.NodeSelector", "nodeSelectorTerms"),
    "NodeSelectorRequirement": ("core/v1.NodeSelectorRequirement", "key operator values"),
    "NodeSelectorTerm": ("core/v1.NodeSelectorTerm", "matchExpressions matchFields"),
    "NodeSpec": ("core/v1.NodeSpec", "configSource externalID podCIDR podCIDRs providerID taints unschedulable"),
    "NodeStatus": ("core/v1.NodeStatus",
        "addresses allocatable capacity conditions config daemonEndpoints "
        "declaredFeatures features images nodeInfo phase runtimeHandlers volumesAttached "
        "volumesInUse"),
    "ObjectMeta": ("meta/v1.ObjectMeta",
        "annotations creationTimestamp deletionGracePeriodSeconds deletionTimestamp "
        "finalizers generateName generation labels managedFields name namespace "
        "ownerReferences resourceVersion selfLink uid"),
    "OwnerReference": ("meta/v1.OwnerReference", "apiVersion blockOwnerDeletion controller kind name uid"),
    "Pod": ("core/v1.Pod", "apiVersion kind metadata spec status"),
    "PodAffinity": ("core/v1.PodAffinity",
        "preferredDuringSchedulingIgnoredDuringExecution "
        "requiredDuringSchedulingIgnoredDuringExecution"),
    "PodAffinityTerm": ("core/v1.PodAffinityTerm",
        "labelSelector matchLabelKeys mismatchLabelKeys namespaceSelector namespaces "
        "topologyKey"),
    "PodDisruptionBudget": ("policy/v1.PodDisruptionBudget", "apiVersion kind metadata spec status"),
    "PodDisruptionBudgetSpec": ("policy/v1.PodDisruptionBudgetSpec",
        "maxUnavailable minAvailable selector unhealthyPodEvictionPolicy"),
    "PodDisruptionBudgetStatus": ("policy/v1.PodDisruptionBudgetStatus",
        "conditions currentHealthy desiredHealthy disruptedPods disruptionsAllowed "
        "expectedPods observedGeneration"),
    "PodGroup": ("scheduling/v1alpha2.PodGroup", "apiVersion kind metadata spec status"),
    "PodGroupCondition": ("meta/v1.Condition", "lastTransitionTime message observedGeneration reason status type"),
    "PodGroupResourceClaim": ("scheduling/v1alpha2.PodGroupResourceClaim",
        "name resourceClaimName resourceClaimTemplateName"),
    "PodGroupSchedulingConstraints": ("scheduling/v1alpha2.PodGroupSchedulingConstraints", "topology"),
    "PodGroupSchedulingPolicy": ("scheduling/v1alpha2.PodGroupSchedulingPolicy", "basic gang"),
    "PodGroupSpec": ("scheduling/v1alpha2.PodGroupSpec",
        "disruptionMode podGroupTemplateRef priority priorityClassName resourceClaims "
        "schedulingConstraints schedulingPolicy"),
    "PodGroupStatus": ("scheduling/v1alpha2.PodGroupStatus", "conditions resourceClaimStatuses"),
    "PodGroupTemplate": ("scheduling/v1alpha2.PodGroupTemplate",
        "disruptionMode name priority priorityClassName resourceClaims "
        "schedulingConstraints schedulingPolicy"),
    "PodGroupTemplateReference": ("scheduling/v1alpha2.PodGroupTemplateReference", "workload"),
    "PodResourceClaim": ("core/v1.PodResourceClaim", "name resourceClaimName resourceClaimTemplateName"),
    "PodSchedulingGate": ("core/v1.PodSchedulingGate", "name"),
    "PodSchedulingGroup": ("core/v1.PodSchedulingGroup", "podGroupName"),
    "PodSpec": ("core/v1.PodSpec",
        "activeDeadlineSeconds affinity automountServiceAccountToken containers dnsConfig "
        "dnsPolicy enableServiceLinks ephemeralContainers hostAliases hostIPC hostNetwork "
        "hostPID hostUsers hostname hostnameOverride imagePullSecrets initContainers "
        "nodeName nodeSelector os overhead preemptionPolicy priority priorityClassName "
        "readinessGates resourceClaims resources restartPolicy runtimeClassName "
        "schedulerName schedulingGates schedulingGroup securityContext serviceAccount "
        "serviceAccountName setHostnameAsFQDN shareProcessNamespace subdomain "
        "terminationGracePeriodSeconds tolerations topologySpreadConstraints volumes"),
    "PodStatus": ("core/v1.PodStatus",
        "allocatedResources conditions containerStatuses ephemeralContainerStatuses "
        "extendedResourceClaimStatus hostIP hostIPs initContainerStatuses message "
        "nodeAllocatableResourceClaimStatuses nominatedNodeName observedGeneration phase "
        "podIP podIPs qosClass reason resize resourceClaimStatuses resources startTime"),
    "PodTemplateMetadata": ("meta/v1.ObjectMeta",
        "annotations creationTimestamp deletionGracePeriodSeconds deletionTimestamp "
        "finalizers generateName generation labels managedFields name namespace "
        "ownerReferences resourceVersion selfLink uid"),
    "PodTemplateSpec": ("core/v1.PodTemplateSpec", "metadata spec"),
    "PreferredSchedulingTerm": ("core/v1.PreferredSchedulingTerm", "preference weight"),
    "PriorityClass": ("scheduling/v1.PriorityClass",
        "apiVersion description globalDefault kind metadata preemptionPolicy value"),
    "ReplicaSet": ("apps/v1.ReplicaSet", "apiVersion kind metadata spec status"),
    "ReplicaSetSpec": ("apps/v1.ReplicaSetSpec", "minReadySeconds replicas selector template"),
    "ReplicationController": ("core/v1.ReplicationController", "apiVersion kind metadata spec status"),
    "ReplicationControllerSpec": ("core/v1.ReplicationControllerSpec", "minReadySeconds replicas selector template"),
    "ResourceClaim": ("resource/v1.ResourceClaim", "apiVersion kind metadata spec status"),
    "ResourceClaimSpec": ("resource/v1.ResourceClaimSpec", "devices"),
    "ResourceClaimStatus": ("resource/v1.ResourceClaimStatus", "allocation devices reservedFor"),
    "ResourceClaimTemplate": ("resource/v1.ResourceClaimTemplate", "apiVersion kind metadata spec"),
    "ResourceClaimTemplateSpec": ("resource/v1.ResourceClaimTemplateSpec", "metadata spec"),
    "ResourcePool": ("resource/v1.ResourcePool", "generation name resourceSliceCount"),
    "ResourceRequirements": ("core/v1.ResourceRequirements", "claims limits requests"),
    "ResourceSlice": ("resource/v1.ResourceSlice", "apiVersion kind metadata spec"),
    "ResourceSliceSpec": ("resource/v1.ResourceSliceSpec",
        "allNodes devices driver nodeName nodeSelector perDeviceNodeSelection pool "
        "sharedCounters"),
    "RollingUpdateDaemonSet": ("apps/v1.RollingUpdateDaemonSet", "maxSurge maxUnavailable"),
    "RollingUpdateDeployment": ("apps/v1.RollingUpdateDeployment", "maxSurge maxUnavailable"),
    "RollingUpdateStatefulSetStrategy": ("apps/v1.RollingUpdateStatefulSetStrategy", "maxUnavailable partition"),
    "Service": ("core/v1.Service", "apiVersion kind metadata spec status"),
    "ServiceSpec": ("core/v1.ServiceSpec",
        "allocateLoadBalancerNodePorts clusterIP clusterIPs externalIPs externalName "
        "externalTrafficPolicy healthCheckNodePort internalTrafficPolicy ipFamilies "
        "ipFamilyPolicy loadBalancerClass loadBalancerIP loadBalancerSourceRanges ports "
        "publishNotReadyAddresses selector sessionAffinity sessionAffinityConfig "
        "trafficDistribution type"),
    "StatefulSet": ("apps/v1.StatefulSet", "apiVersion kind metadata spec status"),
    "StatefulSetOrdinals": ("apps/v1.StatefulSetOrdinals", "start"),
    "StatefulSetSpec": ("apps/v1.StatefulSetSpec",
        "minReadySeconds ordinals persistentVolumeClaimRetentionPolicy "
        "podManagementPolicy replicas revisionHistoryLimit selector serviceName template "
        "updateStrategy volumeClaimTemplates"),
    "StatefulSetUpdateStrategy": ("apps/v1.StatefulSetUpdateStrategy", "rollingUpdate type"),
    "Taint": ("core/v1.Taint", "effect key timeAdded value"),
    "Toleration": ("core/v1.Toleration", "effect key operator tolerationSeconds value"),
    "TopologyConstraint": ("scheduling/v1alpha2.TopologyConstraint", "key"),
    "TopologySpreadConstraint": ("core/v1.TopologySpreadConstraint",
        "labelSelector matchLabelKeys maxSkew minDomains nodeAffinityPolicy "
        "nodeTaintsPolicy topologyKey whenUnsatisfiable"),
    "TypedLocalObjectReference": ("scheduling/v1alpha2.TypedLocalObjectReference", "apiGroup kind name"),
    "WeightedPodAffinityTerm": ("core/v1.WeightedPodAffinityTerm", "podAffinityTerm weight"),
    "Workload": ("scheduling/v1alpha2.Workload", "apiVersion kind metadata spec"),
    "WorkloadPodGroupTemplateReference": ("scheduling/v1alpha2.WorkloadPodGroupTemplateReference",
        "podGroupTemplateName workloadName"),
    "WorkloadSpec": ("scheduling/v1alpha2.WorkloadSpec", "controllerRef podGroupTemplates"),
}
