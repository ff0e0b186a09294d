"""Results as a markdown table (for the README and the closing note) and as JSON (for tooling)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.measure import Result


@dataclass
class Section:
    key: str
    title: str
    rows: list[Result]
    reference: str  # the row every other row is divided by (the floor of the same interleaved group)
    info: list[str] = field(default_factory=list)
    versus: str = ""  # the gate row that the peer rows ("peer: …") are divided by, when there is one

    def median_of(self, name: str) -> float | None:
        return next((row.median_ms for row in self.rows if row.name == name), None)

    def reference_ms(self) -> float | None:
        return self.median_of(self.reference)

    def reference_cpu_ms(self) -> float | None:
        return next((row.median_cpu_ms for row in self.rows if row.name == self.reference), None)

    def peer_ratio(self, row: Result) -> float | None:
        gate = self.median_of(self.versus) if self.versus else None
        if not row.name.startswith("peer:") or row.median_ms is None or not gate:
            return None
        return row.median_ms / gate


@dataclass
class Target:
    name: str
    value: float | None
    op: str  # "<=" or ">="
    limit: float
    unit: str = "x"
    caveat: str = ""  # set when a row behind the value failed its output check
    cpu_value: float | None = None  # the same ratio of CPU-time medians (the target is judged on wall time)

    @property
    def met(self) -> bool | None:
        if self.value is None:
            return None
        return self.value <= self.limit if self.op == "<=" else self.value >= self.limit

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "cpu_value": self.cpu_value,
            "op": self.op,
            "limit": self.limit,
            "met": self.met,
            "caveat": self.caveat,
        }


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _check(row: Result) -> str:
    if row.skipped:
        return f"skipped: {row.skipped}"
    if row.failures:
        return f"FAILED {row.failures}/{row.n}: {row.first_failure[:120]}".replace("|", "\\|").replace("\n", " ")
    return "ok"


def render_markdown(meta: dict[str, Any], sections: list[Section], targets: list[Target]) -> str:
    m = meta["machine"]
    opts = meta["options"]
    lines = [
        f"# gate benchmark — {meta['date']}",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB RAM, {m['os']}, Python {m['python']}; "
        f"load average {m['load_before'][0]} before, {m['load_after'][0]} after.",
        f"Runs: {opts['runs']} timed per row (after {opts['warmup']} warm-up rounds), candidates of a section "
        f"interleaved in a shuffled order each round; whole-process wall time from spawn to reap, and CPU time "
        f"(user + system, from the child's rusage; on shared cores the steadier of the two). Peak RSS: "
        f"the process's own ru_maxrss over 2 extra untimed runs forked from a small shim (which puts a floor of "
        f"a few MB under tiny commands such as grep). Total {meta['duration_s']} s. gate: {meta['gate']}.",
        "",
    ]
    for section in sections:
        ref = section.reference_ms()
        ref_cpu = section.reference_cpu_ms()
        peer_col = bool(section.versus)
        lines += [
            f"## {section.title}",
            "",
            "| candidate | n | median ms | p95 ms | × floor | CPU ms | CPU × floor |"
            + (" peer / gate |" if peer_col else "")
            + " peak RSS MB | check |",
            "|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if peer_col else "") + "---:|---|",
        ]
        for row in section.rows:
            ratio = "–" if row.median_ms is None or not ref else f"{row.median_ms / ref:.2f}"
            cpu = row.median_cpu_ms
            cpu_ratio = "–" if cpu is None or not ref_cpu else f"{cpu / ref_cpu:.2f}"
            rss = "–" if row.peak_rss_mb is None else f"{row.peak_rss_mb:.1f}"
            peer = section.peer_ratio(row)
            peer_cell = (" " + ("" if peer is None else f"{peer:.2f}") + " |") if peer_col else ""
            lines.append(
                f"| {row.name} | {row.n} | {_ms(row.median_ms)} | {_ms(row.p95_ms)} | {ratio} | {_ms(cpu)} | "
                f"{cpu_ratio} |{peer_cell} "
                f"{rss} | {_check(row)} |"
            )
        if peer_col:
            lines += ["", f"peer / gate: the peer's median over that of {section.versus}, same section."]
        notes = [f"{row.name}: {row.note}" for row in section.rows if row.note]
        for text in [*section.info, *notes]:
            lines.append(f"- {text}")
        lines.append("")
    lines += ["## Targets", "", "Judged on wall time; the same ratio in CPU time beside it.", "",
              "| target | measured | CPU | limit | met |", "|---|---:|---:|---:|---|"]
    for target in targets:
        value = "–" if target.value is None else f"{target.value:.2f}"
        unit = " MB" if target.unit == "MB" else "×"
        cpu_cell = "–" if target.cpu_value is None else f"{target.cpu_value:.2f}{unit}"
        met = {True: "yes", False: "**no**", None: "n/a"}[target.met]
        if target.caveat:
            met += f" (unreliable: {target.caveat})"
        lines.append(f"| {target.name} | {value}{unit} | {cpu_cell} | {target.op} {target.limit:g}{unit} | {met} |")
    lines.append("")
    return "\n".join(lines)


def to_json(meta: dict[str, Any], sections: list[Section], targets: list[Target]) -> dict[str, Any]:
    return {
        **meta,
        "sections": [
            {
                "key": s.key,
                "title": s.title,
                "reference": s.reference,
                "versus": s.versus,
                "info": s.info,
                "rows": [
                    {
                        **row.as_dict(),
                        "vs_reference": (
                            row.median_ms / s.reference_ms() if row.median_ms is not None and s.reference_ms() else None
                        ),
                        "cpu_vs_reference": (
                            row.median_cpu_ms / s.reference_cpu_ms()
                            if row.median_cpu_ms is not None and s.reference_cpu_ms()
                            else None
                        ),
                    }
                    for row in s.rows
                ],
            }
            for s in sections
        ],
        "targets": [t.as_dict() for t in targets],
    }
