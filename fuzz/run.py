"""Run the coverage-guided fuzz targets one after another, each for a bounded time, and summarize.

``python -m fuzz.run --seconds 20 --budget 175`` (the CI step: five targets, never more than
``--budget`` seconds in all, start-up included) or ``make fuzz`` (long local runs, ``FUZZ_SECONDS``
per target). Each target runs in its own process
(``fuzz/harness.py``) over the committed seed corpus ``fuzz/corpus/<target>/`` and the past findings
``fuzz/regressions/<target>/``; new coverage-increasing inputs go to a work folder (a temporary one
unless ``--work`` names one), never into the committed corpus. Prints one line per target:
executions, coverage edges and features at the end, and inputs that added coverage. Exits non-zero
when any target finds a crash, after printing where libFuzzer saved the input and how to turn it into
a regression case.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_NAMES = ("importer", "text", "validator", "prover", "differential")
STAT = re.compile(r"^stat::(\w+):\s+(\d+)", re.MULTILINE)
PROGRESS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)", re.MULTILINE)


def run_target(name: str, seconds: int, work: Path, artifacts: Path, wall: float) -> tuple[bool, int, str]:
    """Fuzz one target for ``seconds`` (interrupted after ``wall`` seconds in all).

    Returns (no finding, executions, summary). A target that never got past its start-up within
    ``wall`` has no finding and zero executions, and says so."""
    work.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    corpora = [str(work), str(ROOT / "fuzz" / "corpus" / name)]
    regressions = ROOT / "fuzz" / "regressions" / name
    if regressions.is_dir():
        corpora.append(str(regressions))
    command = [
        sys.executable,
        "-m",
        "fuzz.harness",
        name,
        f"-max_total_time={seconds}",
        "-timeout=20",
        "-rss_limit_mb=2048",
        "-max_len=8192",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/",
        *corpora,
    ]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    stopped = False
    try:
        output, _ = process.communicate(timeout=wall)
    except subprocess.TimeoutExpired:  # past its share of the budget: libFuzzer stops on SIGINT with stats
        stopped = True
        process.send_signal(signal.SIGINT)
        try:
            output, _ = process.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
    done = subprocess.CompletedProcess(command, process.returncode, output, "")
    elapsed = time.monotonic() - started
    log = done.stdout + done.stderr
    stats = {key: int(value) for key, value in STAT.findall(log)}
    progress = PROGRESS.findall(log)
    cov, ft = (progress[-1][1], progress[-1][2]) if progress else ("?", "?")
    if progress and "number_of_executed_units" not in stats:  # killed before its final stats
        stats["number_of_executed_units"] = int(progress[-1][0])
    summary = (
        f"fuzz {name}: {stats.get('number_of_executed_units', 0)} executions in {elapsed:.0f}s, "
        f"cov {cov} ft {ft}, {stats.get('new_units_added', 0)} new inputs"
    )
    executions = stats.get("number_of_executed_units", 0)
    crashed = "==ERROR" in log or "Uncaught Python exception" in log or "Traceback" in log
    if stopped and executions == 0 and "KeyboardInterrupt" in log:
        crashed = False  # our SIGINT landed while Python was still importing: no verdict, not a finding
    interrupted = "run interrupted" in log or done.returncode in (-signal.SIGINT, 130)
    if not crashed and executions == 0:
        return True, 0, f"{summary} -- NOT FUZZED: start-up took its whole {wall:.0f}s share of the budget"
    if not crashed and (done.returncode == 0 or interrupted):
        return True, executions, summary
    crashes = sorted(p for p in artifacts.iterdir() if p.is_file())
    detail = "\n".join(log.splitlines()[-40:])
    where = "\n".join(f"  input saved at {p}" for p in crashes) or "  (no input saved)"
    return (
        False,
        executions,
        (
            f"{summary}\nFINDING in {name} (exit {done.returncode}):\n{detail}\n{where}\n"
            f"  keep it as a regression case: copy it into fuzz/regressions/{name}/, fix the defect, and "
            "tests/fuzz/test_fuzz_corpus.py replays it on every test run."
        ),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=25, help="fuzzing time per target")
    parser.add_argument("--budget", type=float, default=0.0, help="wall seconds for all targets (0: none)")
    parser.add_argument("--targets", nargs="*", default=list(TARGET_NAMES), choices=TARGET_NAMES)
    parser.add_argument("--work", type=Path, help="keep the grown corpus here (default: a temporary folder)")
    args = parser.parse_args(argv)
    try:
        import atheris  # noqa: F401 - only checking that it is installed
    except ImportError:
        print("fuzz: atheris is not installed (pip install -e '.[test]'); nothing was fuzzed")
        return 1
    scratch = Path(tempfile.mkdtemp(prefix="dotboxd-fuzz-"))
    os.environ.setdefault("PYTHONHASHSEED", "0")
    failures = total = skipped = 0
    started = time.monotonic()
    try:
        for left, name in zip(range(len(args.targets), 0, -1), args.targets, strict=True):
            work = (args.work / name) if args.work else scratch / "work" / name
            seconds, wall = args.seconds, float(args.seconds + 600)
            if args.budget:  # share what is left; start-up and the seed pass take about 10 s
                wall = max(5.0, (args.budget - (time.monotonic() - started)) / left)
                seconds = max(1, min(args.seconds, int(wall) - 10))
            ok, executions, summary = run_target(name, seconds, work, scratch / "artifacts" / name, wall)
            total += executions
            skipped += ok and executions == 0
            print(summary, flush=True)
            failures += not ok
            if not ok:  # keep the crashing inputs where the message said they are
                kept = ROOT / ".fuzz-findings" / name
                kept.mkdir(parents=True, exist_ok=True)
                for crash in (scratch / "artifacts" / name).iterdir():
                    shutil.copy(crash, kept / crash.name)
                print(f"  (copied to {kept})")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    clean = len(args.targets) - failures - skipped
    print(f"fuzz: {total} executions; {clean} targets clean, {skipped} not fuzzed, {failures} with findings")
    if total == 0:
        print("fuzz: nothing was fuzzed at all: failing rather than passing silently")
    return 1 if failures or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
