"""Karpenter's provisioning counts identical NodeClaims as one record (simulate/karpenter.py): the
plan is the one the claim-by-claim loop gives, over randomized small plans, and a huge replica
count is arithmetic. Like kube-scheduler's scale tests (test_k8s_scheduler.py), these assert on the
result and bound the work done, never the time: a loop over 2^31 claims would exceed the budget
of `_add` calls and raise, not hang."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from gpufleet.simulate import karpenter
from tests.simulate.test_karpenter_provisioning import _deployment, _placed, _pool, _types
from tests.simulate.test_karpenter_topology import HOSTNAME, REGION, SMALL, ZONE, _anti, _spread

# A claim of SMALL replicas on m5.large holds 19, as the loop's small run below shows.
PER_M5_LARGE = 19
ZONES = {"key": ZONE, "operator": "In", "values": ["us-west-2a", "us-west-2b", "us-west-2c"]}
# m5.large has no spot price in the snapshot's us-west-2, and the pool allows spot: the smallest is named.
UNPRICED = "smallest of 1 type holding them (no prices: no spot price for m5.large in us-west-2)"


def _web(replicas: int, rules: dict | None = None, name: str = "web", requests: dict = SMALL, node_selector: dict | None = None) -> dict:
    deployment = _deployment(name, replicas, requests, node_selector=node_selector)
    spec = deployment["inputs"]["spec"]["template"]["spec"]
    spec.update(rules or {})
    return deployment


def _loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Karpenter's provisioning as it builds claims, one per pass: no two claims are ever one record."""
    monkeypatch.setattr(karpenter._Claim, "alike", lambda self, other: False)


_ADD = karpenter._add
# Claims filled (calls of `_add`) in a run, many times over what a plan here needs: the loop fills
# at most 169 for the randomized small plans below, the counted plans of 2^31 replicas a handful.
ADDS = 2000


def _bounded(monkeypatch: pytest.MonkeyPatch, most: int) -> list[int]:
    """At most `most` claims filled (calls of `_add`) from here on: a loop that does not end raises."""
    calls = [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        assert calls[0] < most, "NodeClaims are walked one by one, or without end"
        return _ADD(*args, **kwargs)

    monkeypatch.setattr(karpenter, "_add", counted)
    return calls


@pytest.fixture
def budget(monkeypatch: pytest.MonkeyPatch):
    """At most a few thousand claims filled in a run: a loop over the replicas raises here."""
    calls = _bounded(monkeypatch, ADDS)
    tracemalloc.start()
    yield calls
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2**20, peak  # a few claim records, whatever the counts


def _provisioned(placed: dict, name: str = "web") -> tuple[list[dict], int, str]:
    pod = next(p for p in placed["pods"] if p["pod"].endswith(f"/{name}"))
    return pod["provisioned"], pod.get("pending", 0), pod["status"]


def test_the_small_run_fills_a_claim_with_19(monkeypatch):
    _loop(monkeypatch)
    entries, pending, _ = _provisioned(_placed(REGION, _pool("default", [_types(["m5.large"])]), _web(2 * PER_M5_LARGE + 1)))
    assert (entries[0]["nodes"], pending) == (3, 0)
    entries, _, _ = _provisioned(_placed(REGION, _pool("default", [_types(["m5.large"])]), _web(2 * PER_M5_LARGE)))
    assert entries[0]["nodes"] == 2


@pytest.mark.parametrize(
    "rules, per_claim",
    [(None, PER_M5_LARGE), (_anti(HOSTNAME), 1), (_spread(HOSTNAME), 1), (_spread(HOSTNAME, 2), 2), (_spread(ZONE), PER_M5_LARGE)],
    ids=["plain", "hostname-anti-affinity", "hostname-spread", "hostname-spread-skew-2", "zone-spread"],
)
def test_two_billion_replicas_are_counted_not_walked(budget, rules, per_claim):
    entries, pending, status = _provisioned(_placed(REGION, _pool("default", [_types(["m5.large"]), ZONES]), _web(2**31, rules)))
    assert (pending, status) == (0, "provisioned")
    assert sum(e["placed"] for e in entries) == 2**31
    assert sum(e["nodes"] for e in entries) == -(-(2**31) // per_claim)
    assert budget[0] > 0


def test_a_pool_limit_bounds_the_counted_claims_and_its_smaller_type_takes_what_is_left(budget):
    """Each claim counts m5.xlarge's 4 vCPUs against the limit while it may be one; with 3 left,
    only m5.large fits (subtractMax): one claim of it, then the limit holds the rest back."""
    pool = _pool("default", [_types(["m5.large", "m5.xlarge"])], limits={"cpu": "1003"})
    placed = _placed(REGION, pool, _web(2**31))
    entries, pending, _ = _provisioned(placed)
    assert [(e["instanceType"], e["nodes"]) for e in entries] == [("m5.xlarge", 250), ("m5.large", 1)]
    assert pending == 2**31 - sum(e["placed"] for e in entries) and pending > 2**31 - 10**4
    assert "held back by its limits (cpu 1003)" in placed["pods"][0]["message"]


def test_a_nodes_limit_bounds_two_billion_anti_affine_replicas(budget):
    pool = _pool("default", [_types(["m5.large"])], limits={"nodes": str(10**9)})
    entries, pending, _ = _provisioned(_placed(REGION, pool, _web(2**31, _anti(HOSTNAME))))
    assert (entries[0]["nodes"], entries[0]["placed"], pending) == (10**9, 10**9, 2**31 - 10**9)


def test_a_second_template_fills_the_counted_claims_of_the_first(budget):
    """2^31 anti-affine replicas of 200m, one per claim; then 2^31 small ones fill the room each
    leaves (17 of 100m, where a claim holds 19 alone) before any new claim: the records split and
    count again."""
    placed = _placed(
        REGION, _pool("default", [_types(["m5.large"])]), _web(2**31, _anti(HOSTNAME), requests={"cpu": "200m"}), _web(2**31, name="small")
    )
    first, _, _ = _provisioned(placed)
    second, pending, _ = _provisioned(placed, "small")
    assert first == [{"nodePool": "default", "instanceType": "m5.large", "nodes": 2**31, "placed": 2**31, "candidates": 1, "chosen": UNPRICED}]
    assert (second[0]["nodes"], second[0]["placed"], pending) == (-(-(2**31) // 17), 2**31, 0)


def test_the_pods_of_counted_claims_count_in_their_zone(budget):
    """Three anti-affine replicas pinned to us-west-2a are three claims, one record: a spread of
    maxSkew 2 over them keeps the next template out of that zone (3 above the others' 0), so it
    launches its own claim rather than join theirs."""
    over_web = {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}
    placed = _placed(
        REGION,
        _pool("default", [_types(["m5.large"]), ZONES]),
        _web(3, _anti(HOSTNAME), node_selector={ZONE: "us-west-2a"}),
        _web(6, {"topologySpreadConstraints": [over_web]}, name="small"),
    )
    assert placed["provisioned"] == [{"nodePool": "default", "instanceType": "m5.large", "nodes": 4, "chosen": UNPRICED}]


# --- randomized small plans: the counted plan is the loop's ------------------------------------

TYPES = ["m5.large", "m5.xlarge", "c5.large", "r5.large", "g5.xlarge"]
REQUESTS = [SMALL, {"cpu": "500m", "memory": "1Gi"}, {"cpu": "1"}, {"cpu": "250m", "nvidia.com/gpu": "1"}]
LIMITS = [None, None, {"cpu": "9"}, {"cpu": "21"}, {"cpu": "64"}, {"nodes": "5"}, {"memory": "40Gi"}, {"nvidia.com/gpu": "2"}]


def _rules(rnd: random.Random, app: str, apps: list[str]) -> dict | None:
    other = rnd.choice(apps)
    term = {"topologyKey": rnd.choice([HOSTNAME, ZONE]), "labelSelector": {"matchLabels": {"app": other}}}
    spread = {
        "maxSkew": rnd.randint(1, 3),
        "topologyKey": rnd.choice([HOSTNAME, HOSTNAME, ZONE]),
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": rnd.choice([app, app, other])}},
    }
    return rnd.choice(
        [
            None,
            None,
            {"topologySpreadConstraints": [spread]},
            {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}},
            {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}},
        ]
    )


def _random_plan(seed: int) -> list[dict]:
    rnd = random.Random(seed)
    pools = [
        _pool(
            f"p{i}",
            [_types(rnd.sample(TYPES, rnd.randint(1, 3))), *([ZONES] if rnd.random() < 0.5 else [])],
            limits=rnd.choice(LIMITS),
            weight=rnd.choice([None, 10]),
        )
        for i in range(rnd.randint(1, 2))
    ]
    apps = [f"app{i}" for i in range(rnd.randint(1, 3))]
    deployments = [
        _web(
            rnd.randint(1, 60),
            _rules(rnd, app, apps),
            name=app,
            requests=rnd.choice(REQUESTS),
            node_selector=rnd.choice([None, None, {ZONE: "us-west-2a"}]),
        )
        for app in apps
    ]
    return [REGION, *pools, *deployments]


_ALIKE = karpenter._Claim.alike


def _watched(found: list[bool]):
    """`_Claim.alike` that also says, in `found`, what it answered."""

    def watched(self, other) -> bool:
        found.append(_ALIKE(self, other))
        return found[-1]

    return watched


def test_counted_claims_give_the_plan_the_loop_gives(monkeypatch):
    merged = []
    for seed in range(60):
        plan = _random_plan(seed)
        found: list[bool] = []
        monkeypatch.setattr(karpenter._Claim, "alike", _watched(found))
        _bounded(monkeypatch, ADDS)
        counted = _placed(*plan)
        _loop(monkeypatch)
        assert counted == _placed(*plan), seed
        merged.append(any(found))
    # The randomized plans do count claims in bulk, most of them.
    assert sum(merged) > len(merged) // 2, merged
