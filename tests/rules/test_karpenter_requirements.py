"""Karpenter's requirement algebra (rules/karpenter_requirement*.py) held to Karpenter's own unit
tests: kubernetes-sigs/karpenter pkg/scheduling/requirement_test.go and requirements_test.go at
v1.14.1, kept unchanged in tests/fixtures/karpenter (SOURCE.md).

Every `Expect(...)` of an `It` and every `Entry(...)` of a `DescribeTable` is one case, named by its
file and line: the Go expression is read into Python over the same names (the constructors, the
fixtures' variables) and judged by the same Gomega matcher. What the reader cannot run is in GAPS
with the reason, or translated by hand below, citing its line; a test holds that every line is one
or the other.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import karpenter_requirements as reqs
from gpufleet.rules.karpenter_requirement import IN, MAX_INT, Requirement, Term, requirement
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "karpenter"
FILES = ("scheduling_requirement_test.go.txt", "scheduling_requirements_test.go.txt")
LABELS = catalog.load().facts.karpenter.requirement_labels
# kubernetes/api core/v1/well_known_labels.go @v0.35.1 L20-L50 (the constants the Go tests name).
K8S = {
    "LabelHostname": "kubernetes.io/hostname",
    "LabelTopologyZone": "topology.kubernetes.io/zone",
    "LabelTopologyRegion": "topology.kubernetes.io/region",
    "LabelFailureDomainBetaZone": "failure-domain.beta.kubernetes.io/zone",
    "LabelFailureDomainBetaRegion": "failure-domain.beta.kubernetes.io/region",
    "LabelInstanceType": "beta.kubernetes.io/instance-type",
    "LabelInstanceTypeStable": "node.kubernetes.io/instance-type",
    "LabelOSStable": "kubernetes.io/os",
    "LabelArchStable": "kubernetes.io/arch",
}

# Lines the reader does not run, and why (the behaviour they test is then translated by hand below,
# or is not behaviour).
GAPS = {
    "scheduling_requirement_test.go.txt:67": "builds a corev1.Pod and maps with lo.MapToSlice: translated by hand (test_normalizes_labels_L67)",
    "scheduling_requirements_test.go.txt:714": "TestRequirementsProfile: a CPU and heap profile of 525000 calls, no assertion",
}


# --- the Go names the fixtures use ----------------------------------------------------------------


def _new(key, operator, *values):
    return requirement(key, operator, *values, aliases=LABELS.aliases)


def _flexible(key, operator, min_values, *values):
    return requirement(key, operator, *values, min_values=min_values, aliases=LABELS.aliases)


def _expected(Key, complement=False, values=frozenset(), gte=None, lte=None, MinValues=None):  # noqa: N803 (Go's field names)
    return Requirement(Key, complement, frozenset(values), gte, lte, MinValues)


def _term(Key, Operator, Values=(), MinValues=None):  # noqa: N803
    return Term(Key, Operator, tuple(Values), MinValues)


def _consist_of(*items):
    return lambda actual: sorted(map(repr, actual)) == sorted(map(repr, items))


NAMES = {
    "NewRequirement": _new,
    "NewRequirementWithFlexibility": _flexible,
    "NewRequirements": reqs.requirements,
    "_R": _expected,
    "_T": _term,
    "_S": lambda *values: frozenset(values),
    "_L": lambda *values: tuple(values),
    "new": lambda n: n,
    "math_MaxInt64": MAX_INT,
    "WELL_KNOWN": frozenset(LABELS.well_known),
    "RESTRICTED": frozenset({K8S["LabelHostname"]}),  # karpenter pkg/apis/v1/labels.go L115-L117
    **{f"corev1_{name}": value for name, value in K8S.items()},
    # Gomega's matchers, as predicates over the actual value.
    "Equal": lambda expected: lambda actual: actual == expected,
    "BeTrue": lambda: lambda actual: actual is True,
    "BeFalse": lambda: lambda actual: actual is False,
    "BeEmpty": lambda: lambda actual: len(actual) == 0,
    "Succeed": lambda: lambda actual: actual is None,
    "HaveOccurred": lambda: lambda actual: actual is not None,
    "HaveLen": lambda n: lambda actual: len(actual) == n,
    "Or": lambda *ms: lambda actual: any(m(actual) for m in ms),
    "And": lambda *ms: lambda actual: all(m(actual) for m in ms),
    "BeNumerically": lambda op, n: lambda actual: {">=": actual >= n, "<": actual < n, "<=": actual <= n, ">": actual > n}[op],
    "ContainElements": lambda *items: lambda actual: all(i in actual for i in items),
    "ConsistOf": _consist_of,
}

# Go spelling -> Python, in order (composite literals first, so no brace is left inside another).
_REWRITES = [
    (r"sets\.Set\[string\]\{\}|sets\.New\[string\]\(\)", "_S()"),
    (r"sets\.New\(", "_S("),
    (r"sets\.List\(", "sorted("),
    (r"\[\]string\{([^{}]*)\}", r"_L(\1)"),
    (r"(?:corev1|v1)\.NodeSelectorOp(\w+)", r'"\1"'),
    (r"corev1\.(Label\w+)", r"corev1_\1"),
    (r"math\.MaxInt(?:64)?\b", "math_MaxInt64"),
    (r"strconv\.Itoa\(", "str("),
    (r"strconv\.Atoi\(", "int("),
    (r"\btrue\b", "True"),
    (r"\bfalse\b", "False"),
    (r"\bnil\b", "None"),
    (r"`([^`]*)`", r"r'''\1'''"),
    (r"\.Intersection\(", ".intersection("),
    (r"\.NodeSelectorRequirements\(\)", ".terms()"),
    (r"\.NodeSelectorRequirement\(\)", ".term()"),
    (r"\.Has\(", ".has("),
    (r"\.Get\(", ".get("),
    (r"\.Keys\(\)", ".keys()"),
    (r"\.Operator\(\)", ".operator()"),
    (r"\.Operator\b", ".operator"),
    (r"\.Values\b", ".values"),
    (r"\.Len\(\)", ".length()"),
    (r"\.Any\(\)", ".any()"),
    (r"\.String\(\)", ".describe(RESTRICTED)"),
    (r"\.Compatible\(", ".compatible("),
    (r"\bAllowUndefinedWellKnownLabels\b", "WELL_KNOWN"),
    (r"\.Error\(\)", ""),
]


def _literal(match: re.Match, name: str) -> str:
    fields = re.sub(r"(\w+):\s", r"\1=", match.group(1))
    return f"{name}({fields})"


def py(go: str) -> str:
    """A Go expression or statement of the fixtures, as Python over NAMES."""
    for pattern, replacement in _REWRITES:
        go = re.sub(pattern, replacement, go)
    go = re.sub(r"&Requirement\{([^{}]*)\}", lambda m: _literal(m, "_R"), go)
    go = re.sub(r"v1\.NodeSelectorRequirementWithMinValues\{([^{}]*)\}", lambda m: _literal(m, "_T"), go)
    go = re.sub(r"^(\w+), err := (.*)$", r"\1 = \2; err = None", go)
    return go.replace(":=", "=")


def _split(args: str) -> list[str]:
    """Top-level comma-separated arguments (brackets and strings respected)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(args):
        if quote:
            quote = "" if ch == quote and args[i - 1] != "\\" else quote
        elif ch in '"`':
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(args[start:i].strip())
            start = i + 1
    parts.append(args[start:].strip())
    return [p for p in parts if p]


def _balanced(text: str) -> bool:
    text = re.sub(r'"(?:[^"\\]|\\.)*"|`[^`]*`', "", text)
    return sum(text.count(c) for c in "([{") <= sum(text.count(c) for c in ")]}")


# Each DescribeTable's body: the actual value and the matcher, over the Entry's arguments (after
# its description).
TABLES = {
    "should intersect two requirements without minValues": ("{0}.intersection({1})", "Equal({2})"),
    "should intersect requirement with minValues with a requirement without": ("{0}.intersection({1})", "Equal({2})"),
    "should intersect two requirements with minValues": ("{0}.intersection({1})", "Equal({2})"),
    "should have the right values": ("{0}.has({1})", "{2}"),
    "should return the right operator": ("{0}.operator()", "Equal({1})"),
    "should have the correct length": ("{0}.length()", "Equal({1})"),
    "should print the right string": ("str({0})", "Equal({1})"),
    "should return the expected NodeSelectorRequirement": ("{0}", "Equal({1})"),
    "should detect well known label truncations": (
        "NewRequirements().compatible(NewRequirements(NewRequirement({0}, 'Exists')), WELL_KNOWN)",
        "Equal({1})",
    ),
    "should detect well known label typos": (
        "NewRequirements().compatible(NewRequirements(NewRequirement({0}, 'Exists')), WELL_KNOWN)",
        "Equal({1})",
    ),
}


def _statements(lines: list[str], start: int):
    """(line number, Go statement) from `start`, each joined over its lines until balanced."""
    i = start
    while i < len(lines):
        text, first = lines[i].strip(), i + 1
        while text and not text.startswith("//") and not _balanced(text):
            i += 1
            text += " " + lines[i].strip()
        yield first, text
        i += 1


def _block_end(lines: list[str], start: int) -> int:
    """The index of the line closing the block opened at `start` (the same indentation)."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    for j in range(start + 1, len(lines)):
        line = lines[j]
        if len(line) - len(line.lstrip()) == indent and line.strip() in ("})", "}", ")"):
            return j
    raise AssertionError(f"no end for line {start + 1}")


def read_cases(name: str) -> tuple[list[tuple[str, list[str], str, str]], set[int]]:
    """(case id, setup statements, actual, matcher) per Expect and Entry line, and every line
    number that holds one (translated or not)."""
    lines = Path(FIXTURES / name).read_text().splitlines()
    scope: list[str] = []  # the Describe- and Context-level variables, in order
    cases, asserting = [], set()
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        if text.startswith("It(") or text.startswith("func Test"):
            end = _block_end(lines, i)
            setup: list[str] = []
            for number, statement in _statements(lines[:end], i + 1):
                if f"{name}:{i + 1}" in GAPS:
                    break
                expect = re.fullmatch(r"Expect\((.*)\)\.(To|ToNot)\((.*)\)", statement)
                if expect:
                    asserting.add(number)
                    matcher = py(expect.group(3))
                    if expect.group(2) == "ToNot":
                        matcher = f"(lambda m: lambda a: not m(a))({matcher})"
                    cases.append((f"{name}:{number}", list(setup), py(expect.group(1)), matcher))
                elif statement and not statement.startswith("//"):
                    setup.append(py(statement))
            asserting.add(i + 1)
            i = end + 1
            continue
        table = re.match(r'DescribeTable\("([^"]+)"', text)
        if table:
            end = _block_end(lines, i)
            actual, matcher = TABLES[table.group(1)]
            asserting.add(i + 1)
            # The table's body (its one Expect) is TABLES' entry.
            asserting.update(n for n in range(i + 1, end + 1) if lines[n - 1].strip().startswith("Expect("))
            for number, statement in _statements(lines[:end], i + 1):
                entry = re.fullmatch(r"Entry\((.*)\),", statement)
                if entry:
                    args = [py(a) for a in _split(entry.group(1))[1:]]
                    asserting.add(number)
                    cases.append((f"{name}:{number}", [], actual.format(*args), matcher.format(*args)))
            i = end + 1
            continue
        if re.match(r"\w+ := ", text):
            scope.append(py(text))
        i += 1
    return [(case, scope + setup, actual, matcher) for case, setup, actual, matcher in cases], asserting


CASES = [case for name in FILES for case in read_cases(name)[0]]


@pytest.mark.parametrize(("case", "setup", "actual", "matcher"), CASES, ids=[c[0] for c in CASES])
def test_upstream_case(case, setup, actual, matcher):
    names = dict(NAMES)
    exec("\n".join(setup), names)  # noqa: S102 (the fixtures' own statements, read into Python)
    value = eval(actual, names)  # noqa: S307
    assert eval(matcher, names)(value), f"{case}: {actual} -> {value!r}"


def test_every_assertion_is_run_or_named_a_gap():
    """Each It block and each Entry/Expect line of the fixtures is a case here or in GAPS."""
    for name in FILES:
        lines = (FIXTURES / name).read_text().splitlines()
        _, asserting = read_cases(name)
        wanted = {n for n, line in enumerate(lines, 1) if re.match(r"\s*(Entry\(|Expect\(|It\(|func Test)", line)}
        gaps = {int(k.rsplit(":", 1)[1]) for k in GAPS if k.startswith(name)}
        inside_gaps = {n for g in gaps for n in range(g, _block_end(lines, g - 1) + 1)}
        assert wanted - asserting - inside_gaps == set(), name


def test_the_reader_sees_every_table_entry():
    # requirement_test.go: 732 Entry lines; requirements_test.go: 454 Compatible expectations.
    counts = {name: sum(1 for c in CASES if c[0].startswith(name)) for name in FILES}
    assert counts["scheduling_requirement_test.go.txt"] >= 732 + 40
    assert counts["scheduling_requirements_test.go.txt"] >= 454


# --- translated by hand ---------------------------------------------------------------------------


def test_normalizes_labels_L67():
    """requirement_test.go L67-L101: the nodeSelector, the terms and a pod's requirements all read
    the deprecated keys as the GA ones."""
    selector = {K8S[k]: "test" for k in ("LabelFailureDomainBetaZone", "LabelFailureDomainBetaRegion", "LabelInstanceType")}
    selector |= {"beta.kubernetes.io/arch": "test", "beta.kubernetes.io/os": "test"}
    terms = [{"key": k, "operator": IN, "values": [v]} for k, v in selector.items()]
    expected = {K8S[k] for k in ("LabelArchStable", "LabelOSStable", "LabelInstanceTypeStable", "LabelTopologyRegion", "LabelTopologyZone")}
    for held in (
        reqs.from_labels(selector, LABELS.aliases),
        reqs.from_terms(terms, LABELS.aliases),
        reqs.of_pod(selector, [{"matchExpressions": terms}], LABELS.aliases, [{"weight": 1, "preference": {"matchExpressions": terms}}]),
    ):
        assert held.keys() == expected
