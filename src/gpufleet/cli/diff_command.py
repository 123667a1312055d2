"""`gpufleet diff`: two plans, or one `pulumi preview --json` of a deployed stack, judged by the same
pack and compared in a reviewer's words."""

from __future__ import annotations

from typing import cast

from gpufleet.cli.output import EXIT_CHANGED, EXIT_OK, EXIT_VIOLATION, policy_inputs, print_json, write


def cmd_diff(args) -> int:
    from gpufleet.analyzer.client import PolicyPack
    from gpufleet.cli import plan_file
    from gpufleet.cli.diff import diff_plans
    from gpufleet.cli.diff_render import render

    pack_dir, given = policy_inputs(args)
    if args.head is None:
        return _diff_one_preview(args, pack_dir, given)
    base, head = plan_file.load(args.base), plan_file.load(args.head)

    def judged(plans) -> list[dict]:
        with PolicyPack(pack_dir, project=plans[0].project, stack=plans[0].stack) as pack:
            # HEAD is judged as an update of BASE: the pack's update policy gets BASE as deployed.
            return [
                plan_file.judged(pack, _with_deployed(pack, given, base.resources) if p is head else given, p.resources).as_plan_block()
                for p in plans
            ]

    # Both plans are judged by the same pack and config, so findings compare like for like; plans of
    # one stack share one pack process (a pack reads its stack's config, so others get their own).
    same_stack = (base.project, base.stack) == (head.project, head.stack)
    blocks = judged([base, head]) if same_stack else judged([base]) + judged([head])
    base_findings, head_findings = (block["violations"] for block in blocks)
    result = diff_plans(base.resources, head.resources, base_findings, head_findings)
    if args.json:
        print_json(result.as_json())
    else:
        write(render(result, str(args.base), str(args.head), markdown=args.format == "markdown"))
    if any(f["level"] == "mandatory" for f in result.new_findings):
        return EXIT_VIOLATION
    return EXIT_CHANGED if result.changed else EXIT_OK


UPDATE_POLICY = "update-drains-capacity"


def _with_deployed(pack, given: dict, deployed: list[dict]) -> dict:
    """The config with the deployed stack for the pack's update policy, when the pack has it (a
    pack of one's own may not: it gets the config as given)."""
    from gpufleet.analyzer.policy_config import PolicyConfig

    pack.wait_ready()
    if UPDATE_POLICY not in {p.name for p in pack.policies}:
        return given
    current = given.get(UPDATE_POLICY) or PolicyConfig()
    return {**given, UPDATE_POLICY: PolicyConfig(current.enforcement_level, {**current.properties, "deployed": deployed})}


def _diff_one_preview(args, pack_dir, given) -> int:
    """One `pulumi preview --json` against a deployed stack: its old states are BASE, its new
    states HEAD, and each step's op is the verdict (the pack judges what will exist)."""
    from gpufleet.analyzer.client import PolicyPack
    from gpufleet.cli import plan_file
    from gpufleet.cli.diff import diff_plans
    from gpufleet.cli.diff_render import render

    preview = plan_file.load(args.base)
    # A preview of a stack not yet deployed creates every resource: its deployed side is empty.
    first_up = (
        preview.kind == "pulumi-preview"
        and bool(preview.verdicts)
        and all(v["ops"] == ["create"] for v in (preview.verdicts or {}).values())
    )
    if preview.kind != "pulumi-preview" or not (preview.before or first_up):
        raise plan_file.PlanFileError(
            f"{args.base}: one plan alone is read only as `pulumi preview --json` of a deployed stack "
            "(steps with oldState) or of a stack not yet deployed (every op create); give BASE.json and HEAD.json to compare two plans"
        )
    deployed_states = cast(list[dict], preview.before)  # a pulumi-preview's old states: a list, maybe empty
    with PolicyPack(pack_dir, project=preview.project, stack=preview.stack) as pack:
        before = plan_file.judged(pack, given, deployed_states).as_plan_block()["violations"]
        after = plan_file.judged(pack, _with_deployed(pack, given, deployed_states), preview.resources).as_plan_block()["violations"]
    result = diff_plans(deployed_states, preview.resources, before, after, preview.verdicts)
    if args.json:
        print_json(result.as_json())
    else:
        name = str(args.base)
        deployed = f"{name} (deployed)" if preview.before else "nothing deployed"
        write(render(result, deployed, f"{name} (previewed)", markdown=args.format == "markdown"))
    if any(f["level"] == "mandatory" for f in result.new_findings):
        return EXIT_VIOLATION
    return EXIT_CHANGED if result.changed else EXIT_OK
