"""EFA interface layout of an instance type, read card by card from its EC2 network-card data.

`efa_layout` builds the launch template's interfaces; `efa_layout_problems` judges any interface
list (the spec's and any launch template's): the one statement of the rules facts.md gives:
- as many EFA interfaces (efa or efa-only) as `MaximumEfaInterfaces`, not as network cards;
- the primary interface is on card 0 at DeviceIndex 0, `efa` where card 0 supports EFA and a plain
  interface where it does not (p6-b300), never `efa-only` (it needs an IP);
- every further interface at DeviceIndex 1 with its own NetworkCardIndex (increasing device indexes
  broke p5: eksctl issue 7520), on a card the type has and that supports the interface's type.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.catalog.catalog import InstanceType

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


def efa_layout(it: InstanceType, secondary: str = "efa") -> list[EfaInterface]:
    """The interfaces of an EFA launch template for the type; `secondary` is the type of the
    interfaces after the primary (`efa`, or `efa-only`, which consumes no IP address)."""
    reason = efa_supported(it)
    if reason:
        raise ValueError(reason)
    if secondary not in EFA_TYPES:
        raise ValueError(f"secondary EFA interface type {secondary!r} is not one of {', '.join(EFA_TYPES)}")
    cards = sorted(it.network_cards, key=lambda c: c.index)
    primary_efa = bool(cards) and "efa" in cards[0].interface_types
    layout = [EfaInterface(0, 0, "efa" if primary_efa else "interface")]
    wanted = it.max_efa_interfaces - (1 if primary_efa else 0)
    for card in cards[1:]:
        if wanted == 0:
            break
        if secondary in card.interface_types:
            layout.append(EfaInterface(card.index, 1, secondary))
            wanted -= 1
    if wanted:
        raise ValueError(f"{it.name}: the network cards offer {it.max_efa_interfaces - wanted} of {it.max_efa_interfaces} {secondary} interfaces")
    return layout


def efa_count(interfaces: list[EfaInterface]) -> int:
    """The EFA interfaces (efa or efa-only) of a layout."""
    return sum(1 for i in interfaces if i.interface_type in EFA_TYPES)


def efa_count_problem(it: InstanceType, count: int) -> str | None:
    """Is `count` the type's EFA interface count (MaximumEfaInterfaces, not the network cards)?"""
    if count != it.max_efa_interfaces:
        return (
            f"{count} EFA interfaces but {it.name} takes {it.max_efa_interfaces} (MaximumEfaInterfaces; it has "
            f"{it.max_network_cards} network cards)"
        )
    return None


def efa_layout_problems(it: InstanceType, interfaces: list[EfaInterface]) -> list[str]:
    """What is wrong with `interfaces` as the EFA layout of the type (empty when nothing is)."""
    reason = efa_supported(it)
    if reason:
        return [reason]
    problems = []
    cards = {c.index: c for c in it.network_cards}
    count = efa_count_problem(it, efa_count(interfaces))
    if count:
        problems.append(count)
    primary = [i for i in interfaces if i.device_index == 0 and i.network_card_index == 0]
    card0_efa = 0 in cards and "efa" in cards[0].interface_types
    if len(primary) != 1:
        problems.append(f"{len(primary)} primary interfaces (network card 0, device index 0); there must be one")
    elif primary[0].interface_type == "efa-only":
        problems.append("the primary interface (card 0, device index 0) is efa-only; it needs an IP address: use efa")
    elif card0_efa and primary[0].interface_type != "efa":
        problems.append(f"the primary interface is {primary[0].interface_type!r}; card 0 of {it.name} supports efa: use it")
    elif not card0_efa and primary[0].interface_type in EFA_TYPES:
        problems.append(f"card 0 of {it.name} supports only {', '.join(cards[0].interface_types) if 0 in cards else 'nothing'}: the primary interface must be a plain interface")
    first = primary[0] if len(primary) == 1 else None
    seen: set[int] = set()
    for i in interfaces:
        if i.network_card_index in seen:
            problems.append(f"network card {i.network_card_index} is used twice")
        seen.add(i.network_card_index)
        if i is not first and i.device_index != 1:
            problems.append(f"the interface on network card {i.network_card_index} has device index {i.device_index}; interfaces after the primary take device index 1")
        card = cards.get(i.network_card_index)
        if card is None:
            problems.append(f"network card {i.network_card_index} does not exist on {it.name} (cards 0..{it.max_network_cards - 1})")
        elif i.interface_type in EFA_TYPES and i.interface_type not in card.interface_types:
            problems.append(f"network card {i.network_card_index} of {it.name} does not support {i.interface_type}")
    return problems
