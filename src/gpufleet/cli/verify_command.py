"""`gpufleet verify (STACK|PLAN.json) [--context NAME | --from DIR] [--nccl] [--json]`: the live or
recorded fleet held against the plan; exit 0 only when every group and placed workload of the plan
was judged and matched, 1 when something does not match (or the NCCL gate failed), 5 when something
could not be proven (each named, with the reason), 2 for input gpufleet cannot read."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from gpufleet.cli.output import EXIT_NOT_PROVEN, EXIT_OK, EXIT_VIOLATION, InputError, print_json, write
from gpufleet.plans.index import Resource, from_plan

MOST_WAIT = 86400.0  # a bounded wait: an NCCL run that takes longer is not waited for
MARKS = {"match": "ok", "mismatch": "MISMATCH", "not-judged": "not judged"}
EXITS = {"match": EXIT_OK, "mismatch": EXIT_VIOLATION, "not-proven": EXIT_NOT_PROVEN}


def add_parser(sub) -> None:
    verify = sub.add_parser("verify", help="hold the live (or recorded) fleet against the plan; --nccl proves the EFA fabric")
    verify.add_argument(
        "plan", metavar="STACK|PLAN.json", help="a shipped stack's name, or a saved plan (gpufleet's or `pulumi preview --json`)"
    )
    verify.add_argument("--context", metavar="NAME", help="the kubeconfig context of the live cluster (read with the Kubernetes client)")
    verify.add_argument(
        "--kubeconfig", type=Path, metavar="PATH", help="with --context: the kubeconfig (default: KUBECONFIG or ~/.kube/config)"
    )
    verify.add_argument("--region", metavar="REGION", help="the live ECS cluster's region (read with boto3)")
    verify.add_argument("--ecs-cluster", metavar="NAME", help="with --region: the ECS cluster (default: the plan's one ECS cluster)")
    verify.add_argument(
        "--from", dest="recorded", type=Path, metavar="DIR", help="a recorded fleet: kubectl and aws ecs JSON, the NCCL launcher log"
    )
    verify.add_argument("--nccl", action="store_true", help="the fabric gate: run or find the plan's NCCL MPIJob, judge its launcher's log")
    verify.add_argument(
        "--wait",
        type=float,
        default=1800.0,
        metavar="SECONDS",
        help="with --nccl on a live cluster: how long to wait for the launcher (default 1800)",
    )
    verify.add_argument("--json", action="store_true", help="print only the verdict as JSON on stdout")


def _resources(args) -> tuple[list[Resource], str, str | None]:
    """(the plan's resources, typed; its stack; its ECS cluster's name)."""
    from gpufleet.catalog import tokens

    path = Path(args.plan)
    if path.suffix == ".json" or path.is_file():
        from gpufleet.cli import plan_file

        try:
            saved = plan_file.load(path)
        except plan_file.PlanFileError as err:
            raise InputError(str(err)) from None
        resources, stack = saved.resources, saved.stack
    else:
        from gpufleet.engine.preview import preview_plan
        from gpufleet.engine.runtime import EngineError
        from gpufleet.stack import files as stackfile

        sf = stackfile.load(stackfile.stack_path(args.plan, stackfile.STACKS), args.plan)
        try:
            plan = preview_plan(sf.pulumi_config(), sf.stack, None, {})
        except EngineError as err:
            raise InputError(f"{sf.path}: offline preview failed: {err}") from None
        resources, stack = plan["resources"], sf.stack
    typed = from_plan({"resources": resources})
    # An auto-named cluster's name exists only once it does: --ecs-cluster names it.
    names = [r.props.get("name") for r in typed if r.type == tokens.ECS_CLUSTER]
    return typed, stack, names[0] if len(names) == 1 and isinstance(names[0], str) else None


def cmd_verify(args) -> int:
    from gpufleet.catalog import catalog
    from gpufleet.verify import nccl_gate, recorded
    from gpufleet.verify.fleet import Observed
    from gpufleet.verify.run import verify
    from gpufleet.verify.verdict import BadInput

    live = args.context is not None or args.region is not None
    if args.recorded is not None and live:
        raise InputError("--from DIR is a recorded fleet: not with --context or --region")
    if args.recorded is None and not live:
        raise InputError("say where the fleet is: --context NAME (Kubernetes), --region REGION (ECS), or --from DIR (a recording)")
    if args.kubeconfig is not None and args.context is None:
        raise InputError("--kubeconfig goes with --context NAME")
    if args.ecs_cluster is not None and args.region is None:
        raise InputError("--ecs-cluster goes with --region REGION")
    if not 0 < args.wait <= MOST_WAIT:
        raise InputError(f"--wait {args.wait:g}: expected a number of seconds above 0 and at most {MOST_WAIT:g} (a day)")
    resources, stack, ecs_cluster = _resources(args)
    cat = catalog.load()
    jobs = nccl_gate.jobs(resources, cat) if args.nccl else []
    if args.nccl and not jobs:
        raise InputError(f"{args.plan}: --nccl: the plan has no MPIJob that runs all_reduce_perf")
    try:
        runs: list[tuple[nccl_gate.NcclJob, str | None, str]] = []
        if args.recorded is not None:
            observed = recorded.read(args.recorded)
            if args.nccl:
                if observed.nccl_log is None:
                    raise BadInput(f"--from {args.recorded}: --nccl needs the launcher's log in it (a *.log or *.txt file)")
                if len(jobs) > 1:
                    raise BadInput(
                        f"--from {args.recorded}: one log for {len(jobs)} NCCL jobs ({', '.join(j.subject for j in jobs)}); record one job's"
                    )
                # A recorded log comes with its source (recorded.read sets both).
                runs = [(jobs[0], observed.nccl_log, cast(str, observed.nccl_log_source))]
        else:
            observed = Observed(where="")
            wheres = []
            if args.context is not None:
                from gpufleet.verify import kube_live

                api = kube_live.client_for(args.context, args.kubeconfig)
                read = kube_live.read(api, args.context)
                observed.kube, observed.gaps = read.kube, read.gaps
                wheres.append(read.where)
                for job in jobs:
                    text, source = kube_live.launcher_log(api, dict(job.inputs), args.wait)
                    runs.append((job, text, source))
            elif args.nccl:
                raise InputError("--nccl reads the launcher's log from the cluster: it needs --context NAME (or --from DIR)")
            if args.region is not None:
                from gpufleet.verify import ecs_live

                ecs_cluster = args.ecs_cluster or ecs_cluster
                if ecs_cluster is None:
                    raise InputError(f"{args.plan}: the plan has no single ECS cluster: name it with --ecs-cluster NAME")
                read = ecs_live.read(ecs_cluster, args.region)
                observed.ecs = read.ecs
                wheres.append(read.where)
            observed.where = " and ".join(wheres)
        verdict = verify(resources, observed, ecs_cluster, runs, cat)
    except BadInput as err:
        raise InputError(str(err)) from None
    if args.json:
        print_json({"stack": stack, "verify": verdict.as_dict()})
    else:
        _render(stack, verdict)
    return EXITS[verdict.outcome]


def _render(stack: str, verdict) -> None:
    lines = [f"gpufleet verify {stack}: {verdict.source}"]
    for check in dict.fromkeys(f.check for f in verdict.findings):
        lines.append(check)
        for f in (f for f in verdict.findings if f.check == check):
            lines.append(f"  [{MARKS[f.verdict]}] {f.subject}: {f.message}")
            lines += [f"      {command}" for command in f.commands]
    counts = verdict.as_dict()["counts"]
    tally = f"{counts['match']} ok, {counts['mismatch']} mismatch, {counts['not-judged']} not judged"
    unjudged = verdict.unjudged()
    if unjudged:
        lines.append(f"not judged, of the plan's {len(verdict.items)} groups, workloads and gaps (by reason):")
        by_reason: dict[str, list[str]] = {}
        for j in unjudged:
            by_reason.setdefault(j.reason, []).append(j.item.subject)
        lines += [f"  {reason}: {', '.join(subjects)}" for reason, subjects in by_reason.items()]
    if verdict.outcome == "match":
        said = f"the fleet matches the plan: all {len(verdict.items)} groups and workloads judged"
    elif verdict.outcome == "mismatch":
        said = "the fleet does not match the plan"
    else:
        said = f"not proven: {len(unjudged)} of the plan's groups and workloads not judged"
    lines.append(f"{said}: {tally}")
    write("\n".join(lines) + "\n")
