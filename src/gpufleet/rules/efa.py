"""EFA interface layout of an instance type, read card by card from its EC2 network-card data.

`efa_layout` builds a launch template's interfaces in one of the two layouts EC2 accepts (facts.md
"EKS with EFA"; EC2 user guide, "Maximize network bandwidth on Amazon EC2 instances with multiple
network cards"):
- `recommended` (AWS's current guidance, and the EKS guide's p6-b200 template): an ENA primary on
  card 0 at device index 0; `efa-only` on card 0 at device index 1 where card 0 supports EFA; then
  `efa-only` at device index 0 on each further card;
- `efa-primary` (002, eksctl, terraform-aws-eks, ParallelCluster): `efa` primary on card 0 (a plain
  interface where card 0 has no EFA, as on p6-b300), then one interface per further card at device
  index 1 (0 on a card that takes one interface, as on hpc6id).

`efa_layout_problems` judges any interface list against what EC2 rejects, from the data alone: a
card the type lacks, a device index at or past the card's MaximumNetworkInterfaces, an interface
type the card does not support, a card and device index used twice, no primary (card 0, device 0)
or an efa-only one, more EFA interfaces than MaximumEfaInterfaces. Fewer EFA interfaces than the
maximum is accepted by EC2 and only costs bandwidth: `efa_bandwidth_note` says so (advisory).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.wording import counted

EFA_TYPES = ("efa", "efa-only")


@dataclass(frozen=True)
class EfaInterface:
    network_card_index: int
    device_index: int
    interface_type: str  # efa | efa-only | interface (a plain ENA interface)


def efa_supported(it: InstanceType) -> str | None:
    # Network facts stand even where a record's accelerator facts are incomplete (trn2u).
    if not it.efa_supported or it.max_efa_interfaces < 1:
        return f"{it.name} does not support EFA (EC2 NetworkInfo.EfaSupported is false)"
    return None


LAYOUTS = ("recommended", "efa-primary")


def _recommended(it: InstanceType, count: int) -> list[EfaInterface]:
    cards = sorted(it.network_cards, key=lambda c: c.index)
    layout = [EfaInterface(0, 0, "interface")]
    card0 = cards[0] if cards and cards[0].index == 0 else None
    if card0 is not None and "efa-only" in card0.interface_types and card0.max_interfaces > 1 and count:
        layout.append(EfaInterface(0, 1, "efa-only"))
    for card in cards:
        if efa_count(layout) == count:
            break
        if card.index != 0 and "efa-only" in card.interface_types and card.max_interfaces > 0:
            layout.append(EfaInterface(card.index, 0, "efa-only"))
    return layout


def _efa_primary(it: InstanceType, count: int, secondary: str) -> list[EfaInterface]:
    cards = sorted(it.network_cards, key=lambda c: c.index)
    primary_efa = bool(cards) and cards[0].index == 0 and "efa" in cards[0].interface_types and count > 0
    layout = [EfaInterface(0, 0, "efa" if primary_efa else "interface")]
    for card in cards:
        if efa_count(layout) == count:
            break
        if card.index != 0 and secondary in card.interface_types and card.max_interfaces > 0:
            layout.append(EfaInterface(card.index, 1 if card.max_interfaces > 1 else 0, secondary))
    return layout


def default_layout(it: InstanceType, count: int | None = None) -> str:
    """`recommended` (AWS's current guidance), unless it cannot reach `count` EFA interfaces on the
    type (card 0 takes a single interface, as on hpc6id: no room for efa-only beside the ENA primary)."""
    wanted = it.max_efa_interfaces if count is None else count
    return "recommended" if efa_count(_recommended(it, wanted)) == wanted else "efa-primary"


def efa_layout(it: InstanceType, layout: str | None = None, secondary: str = "efa", count: int | None = None) -> list[EfaInterface]:
    """The interfaces of an EFA launch template for the type: `count` EFA interfaces (the type's
    MaximumEfaInterfaces when None) in `layout` (None: `default_layout`); `secondary` is the type of
    the efa-primary layout's further interfaces (`efa`, or `efa-only`, which consumes no IP address)."""
    reason = efa_supported(it)
    if reason:
        raise ValueError(reason)
    if secondary not in EFA_TYPES:
        raise ValueError(f"secondary EFA interface type {secondary!r} is not one of {', '.join(EFA_TYPES)}")
    wanted = it.max_efa_interfaces if count is None else count
    layout = layout or default_layout(it, wanted)
    if layout not in LAYOUTS:
        raise ValueError(f"EFA layout {layout!r} is not one of {', '.join(LAYOUTS)}")
    found = _recommended(it, wanted) if layout == "recommended" else _efa_primary(it, wanted, secondary)
    if efa_count(found) != wanted:
        raise ValueError(f"{it.name}: the {layout} layout reaches {efa_count(found)} of {wanted} EFA interfaces on its network cards")
    return found


def efa_count(interfaces: list[EfaInterface]) -> int:
    """The EFA interfaces (efa or efa-only) of a layout."""
    return sum(1 for i in interfaces if i.interface_type in EFA_TYPES)


def efa_count_problem(it: InstanceType, count: int) -> str | None:
    """Does `count` stay within the type's EFA interfaces (MaximumEfaInterfaces, not the network cards)?"""
    if count > it.max_efa_interfaces:
        return (
            f"{count} EFA interfaces but {it.name} takes at most {it.max_efa_interfaces} (MaximumEfaInterfaces; it has "
            f"{it.max_network_cards} network cards)"
        )
    return None


def efa_bandwidth_note(it: InstanceType, interfaces: list[EfaInterface]) -> str | None:
    """Fewer EFA interfaces than the type takes: EC2 accepts it, at the cost of bandwidth."""
    count = efa_count(interfaces)
    if 0 < count < it.max_efa_interfaces:
        return f"{count} of the {it.max_efa_interfaces} EFA interfaces {it.name} takes: the rest of its EFA bandwidth goes unused"
    return None


def efa_layout_problems(it: InstanceType, interfaces: list[EfaInterface]) -> list[str]:
    """What EC2 rejects in `interfaces` as the type's launch template interfaces (empty when nothing)."""
    reason = efa_supported(it)
    if reason:
        return [reason]
    problems = []
    cards = {c.index: c for c in it.network_cards}
    count = efa_count_problem(it, efa_count(interfaces))
    if count:
        problems.append(count)
    primary = [i for i in interfaces if i.device_index == 0 and i.network_card_index == 0]
    if not primary:
        problems.append("no primary interface (network card 0, device index 0)")
    elif primary[0].interface_type == "efa-only":
        problems.append("the primary interface (card 0, device index 0) is efa-only; it needs an IP address: use an ENA interface or efa")
    seen: set[tuple[int, int]] = set()
    for i in interfaces:
        where = (i.network_card_index, i.device_index)
        if where in seen:
            problems.append(f"network card {i.network_card_index}, device index {i.device_index} is used twice")
        seen.add(where)
        card = cards.get(i.network_card_index)
        if card is None:
            problems.append(f"network card {i.network_card_index} does not exist on {it.name} (cards 0..{it.max_network_cards - 1})")
            continue
        if i.device_index >= card.max_interfaces:
            problems.append(
                f"device index {i.device_index} on network card {i.network_card_index}: the card of {it.name} takes "
                f"{counted(card.max_interfaces, 'interface')}, device indexes 0..{card.max_interfaces - 1}"
            )
        if i.interface_type not in card.interface_types:
            problems.append(f"network card {i.network_card_index} of {it.name} does not support {i.interface_type}")
    return problems
