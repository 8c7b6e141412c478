"""``plangate harness``: build or verify a HarnessManifest from git objects."""

from __future__ import annotations

import argparse

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.evaluation.harness.definition import DEFAULT_DEFINITION_PATH
from plangate.evaluation.harness.service import verify_manifest_file, write_manifest
from plangate.verdict import ExitCode


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="HarnessManifest: the content-addressed identity of a harness at a commit "
        "(docs/evaluation.md).",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    build = sub.add_parser("manifest", help="build the manifest of a commit from git objects")
    build.add_argument("--commit", required=True, metavar="SHA", help="commit to describe")
    build.add_argument(
        "--definition",
        default=DEFAULT_DEFINITION_PATH,
        metavar="PATH",
        help=f"harness definition path inside the commit ({DEFAULT_DEFINITION_PATH})",
    )
    build.add_argument("--out", metavar="FILE", help="write the manifest here instead of stdout")
    build.add_argument("--json", action="store_true", help="print {verdict, harness_id, ...}")
    verify = sub.add_parser("verify", help="re-check a manifest file: schema and harness_id")
    verify.add_argument("file", metavar="FILE")
    verify.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate harness``."""
    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    if args.action == "manifest":
        manifest = write_manifest(ctx.cwd, args.commit, args.definition, args.out)
        if args.json:
            print_json(
                ctx,
                {
                    "verdict": "ACCEPTED",
                    "reasons": [],
                    "harness_id": manifest.harness_id,
                    "source_commit": manifest.source_commit,
                    "out": args.out,
                    "manifest": dict(manifest.data),
                },
            )
        elif args.out:
            ctx.out(f"harness_id: {manifest.harness_id}")
            ctx.out(f"written:    {args.out}")
        else:
            ctx.stdout.write(manifest.to_bytes().decode("utf-8"))
        return int(ExitCode.ACCEPTED)
    manifest = verify_manifest_file(ctx.cwd / args.file, args.file)
    if args.json:
        print_json(
            ctx,
            {
                "verdict": "ACCEPTED",
                "reasons": [],
                "harness_id": manifest.harness_id,
                "source_commit": manifest.source_commit,
            },
        )
    else:
        ctx.out(f"manifest: ACCEPTED (harness_id {manifest.harness_id})")
    return int(ExitCode.ACCEPTED)
