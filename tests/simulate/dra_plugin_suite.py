"""kube-scheduler's DynamicResources plugin tests, translated: `TestPlugin` in
pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go, kubernetes/kubernetes
commit cf37f0bf494699f30becc133263a07bd61029bdb (on the release-1.35 line; kept unchanged at
tests/fixtures/kubernetes-dra-plugin/, whose SOURCE.md says why no release tag's copy could be had).
Each row names its upstream case and the line of its name.

What a row holds is what the plugin's PreFilter and Filter decide, the outcome gpufleet's placement
models (simulate/k8s_dra.py): the message each node's Filter gives (a node not named passes), or
PreFilter's refusal (every node fails alike), or a Filter error, which aborts the pod's scheduling.
Status codes (Unschedulable or UnschedulableAndUnresolvable) are not compared: the upstream test's
`verify` compares only the message when the status is not a success, and gpufleet keeps no codes.
Reserve, PreBind, PostFilter, Score and the API objects they write are not modelled; the cases
that test only those stages, or alpha gates, are in LEFT_OUT, each with the reason.

The helpers mirror the test's own fixtures (its `var` block, L75-L732) and the wrappers they call
(pkg/scheduler/testing/wrappers.go, kubernetes/kubernetes 0186526843534706b53d625226f942f3e4d241b1:
`Request` adds "req-<n>" asking ExactCount 1 of the class; `MakeResourceSlice(node, driver)` a
slice named "<node>-<driver>" with nodeName <node> and one pool named <node>); they write
resource.k8s.io/v1 objects, so every row also goes through gpufleet's readers."""

from __future__ import annotations

from dataclasses import dataclass, field

NODE, NODE_2, NODE_3 = "worker", "worker-2", "worker-3"  # nodeName, node2Name, node3Name (L78-L80)
DRIVER = "some-driver"  # driver (L81)
NAMESPACE = "default"  # namespace (L90)
CLAIM = "my-pod-my-resource"  # claimName = podName + "-" + resourceName (L87)
CLAIM_2 = "my-pod-my-resource-2"  # claimName2 (L88)
CLASS = "my-resource-class"  # className (L89)
ATTR = "healthy"  # attrName (L91): set only on the second and third node's device
HOSTNAME = "kubernetes.io/hostname"
# the claim's request and the class selector that break on a device without the attribute (brokenSelector L175-L180)
BROKEN = f'device.attributes["{DRIVER}"].{ATTR}'


def node(name: str) -> dict:
    """workerNode and its siblings (L161, L166, L170): a name and its hostname label."""
    return {"metadata": {"name": name, "labels": {HOSTNAME: name}}}


def device(name: str, healthy: bool | None = None) -> dict:
    return {"name": name} if healthy is None else {"name": name, "attributes": {ATTR: {"bool": healthy}}}


def resource_slice(on: str, *devices: dict) -> dict:
    return {
        "metadata": {"name": f"{on}-{DRIVER}"},
        "spec": {"driver": DRIVER, "nodeName": on, "pool": {"name": on, "resourceSliceCount": 1}, "devices": list(devices)},
    }


def instances(on: str, count: int) -> dict:
    """A slice with devices instance-1 .. instance-<count> and no attributes."""
    return resource_slice(on, *(device(f"instance-{i}") for i in range(1, count + 1)))


WORKER_SLICE = instances(NODE, 1)  # workerNodeSlice (L162)
LARGE_WORKER_SLICE = instances(NODE, 4)  # largeWorkerNodeSlice (L163)
WORKER_2_SLICE = resource_slice(NODE_2, device("instance-1", healthy=True))  # workerNode2Slice (L167)
WORKER_3_SLICE = resource_slice(NODE_3, device("instance-1", healthy=True))  # workerNode3Slice (L171)
DEVICE_CLASS = {"metadata": {"name": CLASS}}  # deviceClass (L95-L99): no selectors
BROKEN_CLASS = {"metadata": {"name": CLASS}, "spec": {"selectors": [{"cel": {"expression": BROKEN}}]}}  # breakCELInClass (L774)


def exact(n: int, cls: str = CLASS, *selectors: str) -> dict:
    """The wrappers' `Request(class)`: the claim's n-th request, ExactCount 1."""
    body: dict = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": 1}
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": f"req-{n}", "exactly": body}


def sub(name: str, count: int, cls: str = CLASS, *selectors: str) -> dict:
    """st.SubRequest(name, class, count); with a selector, st.SubRequestWithSelector (one device:
    allocationResultWithPrioritizedListAndSelector holds one, L375-L387)."""
    body: dict = {"name": name, "deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return body


def prioritized(n: int, *subs: dict) -> dict:
    return {"name": f"req-{n}", "firstAvailable": list(subs)}


def claim(name: str, *requests: dict) -> dict:
    return {"metadata": {"name": name, "namespace": NAMESPACE}, "spec": {"devices": {"requests": list(requests)}}}


PENDING_CLAIM = claim(CLAIM, exact(1))  # claim / pendingClaim (L182-L186, L237-L239)
BROKEN_CLAIM = claim(CLAIM, exact(1, CLASS, BROKEN))  # breakCELInClaim(pendingClaim) (L761)
PRIORITIZED_CLAIM = claim(CLAIM, prioritized(1, sub("subreq-1", 1)))  # claimWithPrioritzedList (L201-L207)
LARGE_CLAIM = claim(CLAIM, *(exact(n) for n in range(1, 6)))  # largeClaim (L187-L195)
# The allocation the test's allocated claims carry (allocationResult L255-L267): instance-1 of the
# worker's pool, the claim pinned to the worker by a metadata.name field selector.
ON_WORKER = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE]}]}]}
WORKER_INSTANCE_1 = f"{DRIVER}/{NODE}/instance-1"


@dataclass(frozen=True)
class Case:
    name: str
    line: int
    pod: tuple[str, ...] = ()  # the named ResourceClaims of the pod's spec.resourceClaims, in order
    claims: tuple[dict, ...] = ()  # the ResourceClaims the cluster holds
    classes: tuple[dict, ...] = ()
    slices: tuple[dict, ...] = ()
    nodes: tuple[str, ...] = (NODE,)  # default if unset is workerNode
    # claims allocated before the pod comes, by name: their allocation's nodeSelector
    allocated: dict[str, dict] = field(default_factory=dict)
    held: tuple[str, ...] = ()  # driver/pool/device held by other claims' allocations
    prioritized_list: bool = False  # enableDRAPrioritizedList
    prefilter: str | None = None  # PreFilter's refusal
    filter: dict[str, str] = field(default_factory=dict)  # node -> Filter's message; others pass
    aborts: bool = False  # the Filter message is an error status: no node takes the pod
    note: str = ""


def _with_resources(name: str, line: int, held: tuple[str, ...] = (), filter: dict[str, str] | None = None, note: str = "") -> Case:
    """with-resources' objects (L1049-L1053): the pending claim, the class, the worker's one device."""
    return Case(name, line, (CLAIM,), (PENDING_CLAIM,), (DEVICE_CLASS,), (WORKER_SLICE,), held=held, filter=filter or {}, note=note)


CEL_ERROR = "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: healthy"
_SCORING = "its Score and NormalizeScore expectations are not compared (gpufleet does not score nodes)"

CASES: tuple[Case, ...] = (
    Case("empty", 938, note="a pod without claims: PreFilter skips, no node is refused"),
    Case(
        "claim-reference", 963, pod=(CLAIM,), claims=(claim(CLAIM, exact(1)), claim("not-my-claim", exact(1))), allocated={CLAIM: ON_WORKER}
    ),
    Case("no-resources", 1034, pod=(CLAIM,), claims=(PENDING_CLAIM,), classes=(DEVICE_CLASS,), filter={NODE: "cannot allocate all claims"}),
    _with_resources("with-resources", 1049),
    _with_resources(
        "exhausted-resources",
        1197,
        held=(WORKER_INSTANCE_1,),  # otherAllocatedClaim holds instance-1 (L497-L499)
        filter={NODE: "cannot allocate all claims"},
    ),
    Case(
        "tainted-device-disabled",
        1218,
        pod=(CLAIM,),
        claims=(PENDING_CLAIM,),
        classes=(DEVICE_CLASS,),
        # taintDevices (L734-L740) adds deviceTaint (L617-L621) to every device
        slices=(
            resource_slice(NODE, {"name": "instance-1", "taints": [{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}]}),
        ),
        note="DRADeviceTaints off: the taint is not looked at",
    ),
    Case(
        "request-admin-access-without-DRAAdminAccess-featuregate",
        1295,
        pod=(CLAIM,),
        claims=(claim(CLAIM, {"name": "req-1", "exactly": {**exact(1)["exactly"], "adminAccess": True}}),),  # adminAccess (L748-L759)
        classes=(DEVICE_CLASS,),
        slices=(WORKER_SLICE,),
        held=(WORKER_INSTANCE_1,),
        filter={NODE: "claim default/my-pod-my-resource, request req-1: admin access is requested, but the feature is disabled"},
        aborts=True,
    ),
    Case(
        "claim-parameters-CEL-runtime-error",
        1343,
        pod=(CLAIM,),
        claims=(BROKEN_CLAIM,),
        classes=(DEVICE_CLASS,),
        slices=(WORKER_SLICE,),
        filter={NODE: CEL_ERROR},
        aborts=True,
    ),
    Case(
        "class-parameters-CEL-runtime-error",
        1357,
        pod=(CLAIM,),
        claims=(PENDING_CLAIM,),
        classes=(BROKEN_CLASS,),
        slices=(WORKER_SLICE,),
        filter={NODE: "class my-resource-class: selector #0: CEL runtime error: no such key: healthy"},
        aborts=True,
    ),
    Case(
        "CEL-runtime-error-for-one-of-two-nodes",
        1376,
        pod=(CLAIM,),
        claims=(BROKEN_CLAIM,),
        classes=(DEVICE_CLASS,),
        slices=(WORKER_SLICE, WORKER_2_SLICE),
        nodes=(NODE, NODE_2),
        filter={NODE: CEL_ERROR},
        aborts=True,
    ),
    Case(
        "CEL-runtime-error-for-one-of-three-nodes",
        1392,
        pod=(CLAIM,),
        claims=(BROKEN_CLAIM,),
        classes=(DEVICE_CLASS,),
        slices=(WORKER_SLICE, WORKER_2_SLICE, WORKER_3_SLICE),
        nodes=(NODE, NODE_2, NODE_3),
        filter={NODE: CEL_ERROR},
        aborts=True,
        note="the pod stays unscheduled (the comment at L1371-L1375); the PreScore status it names is not compared",
    ),
    Case(
        "missing-class",
        1411,
        pod=(CLAIM,),
        claims=(PENDING_CLAIM,),
        prefilter="request req-1: device class my-resource-class does not exist",
    ),
    Case(
        "wrong-topology",
        1423,
        pod=(CLAIM,),
        claims=(claim(CLAIM, exact(1)),),
        # allocatedClaimWithWrongTopology (L486-L488)
        allocated={
            CLAIM: {"nodeSelectorTerms": [{"matchExpressions": [{"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}]}
        },
        filter={NODE: "resourceclaim not available on the node"},
    ),
    Case(
        "good-topology",
        1447,
        pod=(CLAIM,),
        claims=(claim(CLAIM, exact(1)),),
        # allocatedClaimWithGoodTopology (L489-L491)
        allocated={CLAIM: {"nodeSelectorTerms": [{"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [NODE]}]}]}},
    ),
    Case("reserved-okay", 1489, pod=(CLAIM,), claims=(claim(CLAIM, exact(1)),), allocated={CLAIM: ON_WORKER}),
    Case(
        "claim-with-request-with-unknown-device-class",
        1507,
        pod=(CLAIM,),
        claims=(claim(CLAIM, exact(1, "does-not-exist")),),  # updateDeviceClassName (L786-L802)
        prefilter="request req-1: device class does-not-exist does not exist",
    ),
    Case(
        "claim-with-prioritized-list-feature-disabled",
        1519,
        pod=(CLAIM,),
        claims=(PRIORITIZED_CLAIM,),
        classes=(DEVICE_CLASS,),
        prefilter="claim default/my-pod-my-resource, request req-1: has subrequests, but the DRAPrioritizedList feature is disabled",
        note="upstream's PreFilter says 'resource claim default/...' (dynamicresources.go at the same commit), which the "
        "test matches by containment; gpufleet meets it in Filter, in the allocator's words, and refuses every node with it",
    ),
    Case(
        "claim-with-prioritized-list-unknown-device-class",
        1533,
        pod=(CLAIM,),
        claims=(claim(CLAIM, prioritized(1, sub("subreq-1", 1, "does-not-exist"))),),
        prioritized_list=True,
        prefilter="request req-1/subreq-1: device class does-not-exist does not exist",
    ),
    Case(
        "claim-with-prioritized-list",
        1546,
        pod=(CLAIM,),
        claims=(PRIORITIZED_CLAIM,),
        classes=(DEVICE_CLASS,),
        slices=(WORKER_SLICE,),
        prioritized_list=True,
    ),
    _with_resources("timeout_disabled", 1887, note="DRASchedulerFilterTimeout off; gpufleet has no filter timeout"),
    _with_resources("timeout_zero", 1920, note="FilterTimeout 0 disables the timeout; gpufleet has none"),
    Case(
        "single-claim-prioritized-list-scoring",
        2197,
        pod=(CLAIM,),
        # claimWithPrioritizedListAndSelector (L208-L215)
        claims=(claim(CLAIM, prioritized(1, sub("subreq-1", 1, CLASS, BROKEN), sub("subreq-2", 1))),),
        classes=(DEVICE_CLASS,),
        slices=(resource_slice(NODE, device("instance-1", healthy=True)), resource_slice(NODE_2, device("instance-1", healthy=False))),
        nodes=(NODE, NODE_2),
        prioritized_list=True,
        note=_SCORING,
    ),
    Case(
        "multiple-claims-prioritized-list-scoring",
        2240,
        pod=(CLAIM, CLAIM_2),
        # claimWithPrioritzedList and claim2WithPrioritizedListAndMultipleSubrequests (L201-L207, L227-L236)
        claims=(PRIORITIZED_CLAIM, claim(CLAIM_2, prioritized(1, *(sub(f"subreq-{i}", 5 - i) for i in range(1, 5))))),
        classes=(DEVICE_CLASS,),
        slices=(instances(NODE, 4), instances(NODE_2, 2), instances(NODE_3, 1)),
        nodes=(NODE, NODE_2, NODE_3),
        prioritized_list=True,
        filter={NODE_3: "cannot allocate all claims"},
        note=_SCORING,
    ),
    Case(
        "multiple-requests-prioritized-list-scoring",
        2301,
        pod=(CLAIM,),
        # claimWithMultiplePrioritizedListRequests (L216-L226)
        claims=(claim(CLAIM, *(prioritized(n, sub("subreq-1", 2), sub("subreq-2", 1)) for n in (1, 2))),),
        classes=(DEVICE_CLASS,),
        slices=(instances(NODE, 4), instances(NODE_2, 3), instances(NODE_3, 2)),
        nodes=(NODE, NODE_2, NODE_3),
        prioritized_list=True,
        note=_SCORING,
    ),
)

_PREENQUEUE = "PreEnqueue: whether the pod's claims exist in the API server; a plan's pods have no such objects yet"
_API = "its Filter outcome is with-resources'; what it tests is what Reserve, PreBind or Unreserve write to the API server"
_EXTENDED = "DRAExtendedResource (alpha): extended resources backed by DRA device classes are not modelled"
_BINDING = "DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (alpha): binding conditions are not modelled"
_ADMIN = "DRAAdminAccess on: admin access is not modelled (the gate-off case is translated)"

# Every case of TestPlugin not translated above, with the reason. The census test holds the two
# lists against the kept file.
LEFT_OUT: dict[str, str] = {
    "empty-with-extended-resources-enabled": _EXTENDED,
    "claim-template": "the pod's claim from a template is found through pod.status.resourceClaimStatuses, an API-server object; "
    "gpufleet makes a fresh claim per pod from the template",
    "missing-claim": _PREENQUEUE,
    "deleted-claim": _PREENQUEUE,
    "wrong-claim": _PREENQUEUE,
    "with-resources-has-finalizer": _API,
    "with-resources-finalizer-gets-removed": _API,
    "with-resources-finalizer-gets-added": _API,
    "skip-bind": _API,
    "bind-failure": "its Filter outcome is good-topology's; what it tests is Unreserve after a failed Bind",
    "tainted-device-enabled": "DRADeviceTaints on (alpha): device taints and tolerations are not modelled (the gate-off case is translated)",
    "request-admin-access-with-DRAAdminAccess-featuregate": _ADMIN,
    "structured-ignore-allocated-admin-access": _ADMIN + "; an admin-access allocation would have to leave its device free",
    "DRA-disabled": "DynamicResourceAllocation off: gpufleet judges claims only on clusters that serve resource.k8s.io/v1",
    "canceled": "the scheduler cancels Filter: a runtime event with no plan analog",
    "timeout": "a wall-clock Filter timeout of 1ns: a runtime event with no plan analog (timeout_disabled and timeout_zero are translated)",
    "extended-resource-name-with-node-resource": _EXTENDED,
    "extended-resource-name-with-zero-allocatable": _EXTENDED,
    "non-DRA-extended-resource-name-with-zero-allocatable": _EXTENDED,
    "extended-resource-name-no-resource": _EXTENDED,
    "extended-resource-name-with-resources": _EXTENDED,
    "implicit-extended-resource-name-with-resources": _EXTENDED,
    "implicit-extended-resource-name-two-containers-with-resources": _EXTENDED,
    "extended-resource-name-with-resources-fail-patch": _EXTENDED,
    "extended-resource-name-with-resources-has-claim": _EXTENDED,
    "extended-resource-name-with-resources-delete-claim": _EXTENDED,
    "extended-resource-name-bind-failure": _EXTENDED,
    "extended-resource-name-skip-bind": _EXTENDED,
    "extended-resource-name-claim-creation-failure": _EXTENDED,
    "bound-claim-with-succeeded-binding-conditions": _BINDING,
    "bound-claim-with-failed-binding": _BINDING,
    "bound-claim-with-timed-out-binding": _BINDING,
    "prebind-fail-with-binding-timeout": _BINDING,
    "bound-claim-with-mixed-binding-conditions": _BINDING,
    "bound-claim-without-binding-conditions": _BINDING,
    "multi-claims-binding-conditions-all-success": _BINDING,
    "multi-claims-binding-conditions-one-fail": _BINDING,
}
