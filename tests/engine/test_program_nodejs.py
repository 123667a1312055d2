"""A Node.js program (runtime: nodejs) goes through the same monitor: gpufleet runs the program's own
@pulumi/pulumi runner with node, as the nodejs language host does. Its install (npm, about 85 MB)
is this test's, in a temporary copy of tests/engine/nodejs_program."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

from tests.conftest import prepared, run_cli

pytestmark = pytest.mark.slow  # a node program's previews

PROGRAM = pathlib.Path(__file__).with_name("nodejs_program")


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """A copy of the program with the packages scripts/prepare-tests installed for it."""
    if shutil.which("node") is None:
        pytest.skip("node is not on this machine: the nodejs runtime cannot be run here")
    prepared_program = prepared("nodejs_program")
    folder = tmp_path_factory.mktemp("node") / "prog"
    shutil.copytree(PROGRAM, folder)
    (folder / "node_modules").symlink_to(prepared_program / "node_modules")
    return folder


def test_a_nodejs_program_previews_through_the_same_monitor(program):
    code, out, err = run_cli("preview", "--program", str(program), "--json", "--no-policy")
    assert code == 0, err
    plan = json.loads(out)
    [web] = [r for r in plan["resources"] if r["name"] == "web"]
    assert web["urn"] == "urn:pulumi:dev::nodeprog::kubernetes:apps/v1:Deployment::web"
    assert web["inputs"]["spec"]["replicas"] == 2 and web["inputs"]["metadata"]["name"].startswith("web-")
    assert plan["outputs"] == {"urn": web["urn"]}


def test_a_nodejs_program_that_throws_is_exit_2_with_its_message(program, tmp_path):
    failing = tmp_path / "prog"
    shutil.copytree(program, failing, symlinks=True)
    (failing / "Pulumi.dev.yaml").write_text('config:\n  nodeprog:replicas: "2"\n  nodeprog:fail: "on purpose"\n')
    code, _, err = run_cli("preview", "--program", str(failing), "--no-policy")
    assert code == 2 and "Traceback" not in err
    assert "the program raised an error:" in err and "asked to fail: on purpose" in err


def test_a_nodejs_program_without_its_packages_is_exit_2(tmp_path):
    bare = tmp_path / "prog"
    shutil.copytree(PROGRAM, bare)
    code, _, err = run_cli("preview", "--program", str(bare), "--no-policy")
    assert code == 2 and "@pulumi/pulumi/cmd/run does not resolve from there or any folder above it" in err, err
    assert "install the program's packages first" in err


# The Node.js language host's behaviour (pulumi/pulumi sdk/nodejs/cmd/pulumi-language-nodejs/main.go):
# the runner resolved up the tree, TypeScript through the SDK's own ts-node unless `typescript: false`,
# tsconfig, nodeargs before the runner; and the project file's own config.


def _workspace(tmp_path, project: str, files: dict[str, str]) -> pathlib.Path:
    """A monorepo's shape: node_modules at the top (scripts/prepare-tests' install), the program in
    packages/app with no node_modules of its own."""
    top = tmp_path / "repo"
    app = top / "packages" / "app"
    app.mkdir(parents=True)
    (top / "node_modules").symlink_to(prepared("nodejs_program") / "node_modules")
    (app / "Pulumi.yaml").write_text(project)
    (app / "Pulumi.dev.yaml").write_text("config: {}\n")
    for name, text in files.items():
        (app / name).write_text(text)
    return app


def _outputs(app) -> dict:
    code, out, err = run_cli("preview", "--program", str(app), "--json", "--no-policy")
    assert code == 0, err
    return json.loads(out)["outputs"]


TS_PROGRAM = """import * as pulumi from "@pulumi/pulumi";
const n: number = 2;
const config = new pulumi.Config();
export const doubled = n * 2;
export const typescript = process.env.PULUMI_NODEJS_TYPESCRIPT ?? "unset";
export const tsconfig = process.env.PULUMI_NODEJS_TSCONFIG_PATH ?? "unset";
export const greeting = config.get("greeting") ?? "unset";
"""


# (what the program shows, its Pulumi.yaml, its files, its stack outputs)
HOSTED = [
    (
        # No ts-node of the program's own and no node_modules in its folder: the CLI runs it all the same.
        "typescript-up-the-tree",
        "name: app\nruntime:\n  name: nodejs\n  options:\n    tsconfig: tsconfig.pulumi.json\nconfig:\n  greeting:\n    default: hello\n",
        {
            "index.ts": TS_PROGRAM,
            "package.json": '{"name": "app", "main": "index.ts"}',
            "tsconfig.pulumi.json": '{"compilerOptions": {"strict": true}}',
        },
        {"doubled": 4, "typescript": "true", "tsconfig": "tsconfig.pulumi.json", "greeting": "hello"},
    ),
    (
        "typescript-false-and-nodeargs",
        'name: app\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n    nodeargs: "--require ./preload.js"\n',
        {
            "index.js": 'exports.typescript = process.env.PULUMI_NODEJS_TYPESCRIPT ?? "unset";\nexports.preloaded = globalThis.preloaded ?? "no";\n',
            "preload.js": 'globalThis.preloaded = "yes";\n',
            "package.json": '{"name": "app", "main": "index.js"}',
        },
        {"typescript": "unset", "preloaded": "yes"},
    ),
    (
        "esm",
        "name: app\nruntime: nodejs\n",
        {
            "index.js": 'import * as pulumi from "@pulumi/pulumi";\nexport const esm = typeof pulumi.Config === "function" ? "yes" : "no";\n',
            "package.json": '{"name": "app", "type": "module", "main": "index.js"}',
        },
        {"esm": "yes"},
    ),
]


@pytest.mark.parametrize(("project", "files", "outputs"), [case[1:] for case in HOSTED], ids=[case[0] for case in HOSTED])
def test_a_program_runs_as_the_nodejs_language_host_runs_it(program, tmp_path, project, files, outputs):
    assert _outputs(_workspace(tmp_path, project, files)) == outputs


@pytest.mark.parametrize(
    "options, said",
    [
        ("typescript: 'yes'", "runtime.options.typescript = 'yes': must be a boolean"),
        ("packagemanager: npx", "runtime.options.packagemanager = 'npx': must be one of auto, npm, yarn, pnpm, bun"),
        ("nodeargs: '--require \"unclosed'", "runtime.options.nodeargs = '--require \"unclosed': not a command line"),
    ],
)
def test_a_bad_runtime_option_is_exit_2_naming_it(program, tmp_path, options, said):
    app = _workspace(tmp_path, f"name: app\nruntime:\n  name: nodejs\n  options:\n    {options}\n", {"index.js": ""})
    code, _, err = run_cli("preview", "--program", str(app), "--no-policy")
    assert code == 2 and said in err, err


def test_a_typescript_program_that_fails_its_type_check_fails_again_from_ts_node_s_cache(program, tmp_path, monkeypatch):
    """The runner type-checks unless told not to (@pulumi/pulumi cmd/run/run.js: transpileOnly from
    PULUMI_NODEJS_TRANSPILE_ONLY or the tsconfig's noCheck), and its ts-node caches only what
    compiled (vendor/ts-node@7.0.1 readThrough): the TypeScript corpus's tests keep that cache
    between runs, so a program that fails its check must fail on the second run too."""
    cache = tmp_path / "ts-node-cache"
    monkeypatch.setenv("TS_NODE_CACHE_DIRECTORY", str(cache))
    app = _workspace(
        tmp_path,
        "name: app\nruntime: nodejs\n",
        {"index.ts": 'const n: number = "two";\nexport const doubled = n;\n', "package.json": '{"name": "app", "main": "index.ts"}'},
    )
    for _ in range(2):
        code, _, err = run_cli("preview", "--program", str(app), "--no-policy")
        assert code == 2 and "Unable to compile TypeScript" in err and "TS2322" in err, err
    assert cache.is_dir() and not list(cache.rglob("*.js"))


# Transforms and the engine's own functions, for a Node.js program's SDK (engine/callbacks.py,
# engine/builtins.py): its callback server called as the Pulumi engine calls it.

CALLBACKS_PROGRAM = """const pulumi = require("@pulumi/pulumi");
pulumi.runtime.registerResourceTransform(async (args) =>
    args.type === "test:index:Thing" ? { props: { ...args.props, trail: (args.props.trail ?? "") + "stack;" }, opts: args.opts } : undefined);
const one = new pulumi.CustomResource("test:index:Thing", "one", { size: 2 }, {
    transforms: [async (args) => ({ props: { ...args.props, size: args.props.size * 10, trail: "own;" }, opts: args.opts })],
});
// The SDK rehydrates a resource from its URN with pulumi:pulumi:getResource.
exports.again = one.urn.apply((urn) => new pulumi.CustomResource("test:index:Thing", "again", { size: undefined }, { urn }).size);
exports.got = one.urn.apply((urn) => pulumi.runtime.invoke("pulumi:pulumi:getResource", { urn }));
"""


def test_a_nodejs_program_s_transforms_and_get_resource_are_served(program, tmp_path):
    app = _workspace(
        tmp_path, "name: app\nruntime: nodejs\n", {"index.js": CALLBACKS_PROGRAM, "package.json": '{"name": "app", "main": "index.js"}'}
    )
    code, out, err = run_cli("preview", "--program", str(app), "--json", "--no-policy")
    assert code == 0, err
    plan = json.loads(out)
    [one] = [r for r in plan["resources"] if r["name"] == "one"]
    assert one["inputs"] == {"size": 20, "trail": "own;stack;"}
    assert plan["outputs"]["again"] == 20
    assert plan["outputs"]["got"]["urn"] == one["urn"] and plan["outputs"]["got"]["state"] == one["inputs"]


def test_a_nodejs_transform_that_throws_is_exit_2_naming_it(program, tmp_path):
    # One frame, as nodejs_program/index.js says why (node's util.inspect on the SDK's mapped frames).
    failing = "Error.stackTraceLimit = 1;\n" + CALLBACKS_PROGRAM.replace(
        "transforms: [async (args) => (", 'transforms: [async (args) => { throw new Error("no such tag"); }, async (args) => ('
    )
    app = _workspace(tmp_path, "name: app\nruntime: nodejs\n", {"index.js": failing, "package.json": '{"name": "app", "main": "index.js"}'})
    code, _, err = run_cli("preview", "--program", str(app), "--no-policy")
    assert code == 2 and "Traceback" not in err
    assert "a transform of test:index:Thing 'one' failed: transform failed: Error: no such tag" in err, err
