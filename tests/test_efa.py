"""components/catalog/efa.py: the EFA layout of every EFA type, read against moto's raw network-card
records (not through the catalog's parsing), and the layouts other tools got wrong."""

from __future__ import annotations

import dataclasses

import pytest

from components.catalog import catalog
from components.catalog.efa import EfaInterface, efa_layout, efa_layout_problems
from components.catalog.sources import MotoSnapshot

RAW = MotoSnapshot().instance_types()
EFA_TYPES = sorted(n for n, r in RAW.items() if (r.get("NetworkInfo") or {}).get("EfaSupported"))
CAT = catalog.load()


def test_the_snapshot_has_the_types_the_rules_are_about():
    assert {"p5.48xlarge", "p4d.24xlarge", "p6-b300.48xlarge", "i7ie.48xlarge", "trn1.32xlarge"} <= set(EFA_TYPES)


@pytest.mark.parametrize("name", EFA_TYPES)
@pytest.mark.parametrize("secondary", ["efa", "efa-only"])
def test_every_efa_type_gets_maximum_efa_interfaces_card_by_card(name, secondary):
    net = RAW[name]["NetworkInfo"]
    card0 = next(c for c in net["NetworkCards"] if c["NetworkCardIndex"] == 0)
    layout = efa_layout(CAT.get(name), secondary)
    efa = [i for i in layout if i.interface_type in ("efa", "efa-only")]
    assert len(efa) == net["EfaInfo"]["MaximumEfaInterfaces"]
    assert layout[0] == EfaInterface(0, 0, "efa" if "efa" in card0["InterfaceTypes"] else "interface")
    assert all(i.device_index == 1 and i.interface_type == secondary for i in layout[1:])
    assert len({i.network_card_index for i in layout}) == len(layout) <= net["MaximumNetworkCards"]
    assert efa_layout_problems(CAT.get(name), layout) == []


def test_p6_b300_primary_is_a_plain_interface_and_16_efa_follow():
    net = RAW["p6-b300.48xlarge"]["NetworkInfo"]
    assert net["MaximumNetworkCards"] != net["EfaInfo"]["MaximumEfaInterfaces"]
    layout = efa_layout(CAT.get("p6-b300.48xlarge"))
    assert layout[0].interface_type == "interface"
    assert [i.network_card_index for i in layout[1:]] == list(range(1, net["MaximumNetworkCards"]))


def test_counting_network_cards_is_wrong_where_they_differ():
    """eksctl issue 8685: one EFA interface per network card over-counts i7ie.48xlarge."""
    it = CAT.get("i7ie.48xlarge")
    per_card = [EfaInterface(0, 0, "efa")] + [EfaInterface(k, 1, "efa") for k in range(1, it.max_network_cards)]
    [problem] = efa_layout_problems(it, per_card)
    assert f"takes {it.max_efa_interfaces} (MaximumEfaInterfaces" in problem


def test_increasing_device_indexes_are_wrong():
    """eksctl issue 7520: DeviceIndex 0, 1, 2... broke p5; every interface after the primary is 1."""
    it = CAT.get("p5.48xlarge")
    layout = [dataclasses.replace(i, device_index=k) for k, i in enumerate(efa_layout(it))]
    problems = efa_layout_problems(it, layout)
    assert len(problems) == it.max_efa_interfaces - 2  # every card from 2 on
    assert "device index 2; interfaces after the primary take device index 1" in problems[0]


def test_the_primary_is_never_efa_only_though_card_0_lists_it():
    it = CAT.get("p4d.24xlarge")
    assert "efa-only" in it.network_cards[0].interface_types  # moto lists it on card 0
    layout = efa_layout(it, "efa-only")
    assert layout[0].interface_type == "efa"
    broken = [dataclasses.replace(layout[0], interface_type="efa-only"), *layout[1:]]
    assert efa_layout_problems(it, broken) == ["the primary interface (card 0, device index 0) is efa-only; it needs an IP address: use efa"]


def test_cards_past_the_type_and_duplicates_are_flagged():
    it = CAT.get("trn1.32xlarge")
    layout = efa_layout(it)
    problems = efa_layout_problems(it, [*layout[:-1], EfaInterface(it.max_network_cards, 1, "efa")])
    assert f"network card {it.max_network_cards} does not exist on trn1.32xlarge" in problems[0]
    problems = efa_layout_problems(it, [*layout[:-1], EfaInterface(1, 1, "efa")])
    assert problems == ["network card 1 is used twice"]


def test_a_type_without_efa_is_refused():
    with pytest.raises(ValueError, match="g5.xlarge does not support EFA"):
        efa_layout(CAT.get("g5.xlarge"))
