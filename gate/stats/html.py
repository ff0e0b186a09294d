"""`gate stats --html FILE`: one self-contained page (inline CSS and SVG, no script, nothing fetched) charting
per day what the gates delivered and how write-back turns ended, under the report's headline figures."""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from gate.session.audit import read_audit
from gate.stats.select import Selection, select

# (series key, label, colour) in stacking order.
DELIVERY_SERIES = (
    ("FIRED_TOPIC_SHIFT", "topic shift", "#3b82f6"),
    ("FIRED_SESSION_START", "session start", "#10b981"),
    ("FIRED_AFTER_COMPACTION", "after compaction", "#f59e0b"),
)
WRITEBACK_SERIES = (
    ("voluntary", "stored unasked", "#059669"),
    ("stored", "stored after a block", "#34d399"),
    ("acknowledged", "acknowledged", "#a3a3a3"),
    ("ignored", "ignored", "#ef4444"),
)
MAX_DAYS = 120


def daily(records: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """day → counts of fires by reason and of write-back endings."""
    days: dict[str, Counter[str]] = defaultdict(Counter)
    for record in records:
        day = str(record.get("ts", ""))[:10]
        if not day:
            continue
        if record.get("decision") == "fired":
            days[day][str(record.get("reason"))] += 1
        if record.get("event") == "Stop":
            if record.get("outcome") in ("stored", "acknowledged", "ignored"):
                days[day][str(record["outcome"])] += 1
            if record.get("reason") == "ALLOW_ALREADY_STORED" and record.get("outcome_of") != "previous_block":
                days[day]["voluntary"] += 1
    return dict(sorted(days.items())[-MAX_DAYS:])


def _chart(title: str, days: dict[str, Counter[str]], series: tuple[tuple[str, str, str], ...]) -> str:
    width, height, pad = 720, 180, 24
    peak = max([sum(c[key] for key, _, _ in series) for c in days.values()] or [0]) or 1
    step = (width - pad) / max(len(days), 1)
    bar = min(40.0, max(2.0, step * 0.7))
    parts = [f'<svg viewBox="0 0 {width} {height + 40}" role="img" aria-label="{html.escape(title)}">']
    parts.append(f'<text x="0" y="12" class="axis">{peak}</text>')
    parts.append(f'<line x1="{pad}" y1="{height}" x2="{width}" y2="{height}" stroke="#ccc"/>')
    for index, (day, counts) in enumerate(days.items()):
        x = pad + index * step
        y = float(height)
        for key, label, colour in series:
            value = counts[key]
            if not value:
                continue
            h = value / peak * (height - 20)
            y -= h
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{colour}">'
                f"<title>{html.escape(day)}: {value} {html.escape(label)}</title></rect>"
            )
        if len(days) <= 31 or index % max(1, len(days) // 12) == 0:
            parts.append(f'<text x="{x:.1f}" y="{height + 14}" class="axis">{html.escape(day[5:])}</text>')
    parts.append("</svg>")
    legend = " ".join(
        f'<span><i style="background:{colour}"></i>{html.escape(label)}</span>' for _, label, colour in series
    )
    return f"<h2>{html.escape(title)}</h2>{''.join(parts)}<p class=legend>{legend}</p>"


def _pct(share: float | None) -> str:
    return "–" if share is None else f"{round(share * 100)}%"


def render_html(report: dict[str, Any], days: dict[str, Counter[str]]) -> str:
    scope = report["filters"].get("project_root") or report["filters"]["project"] or "all projects"
    adoption, use = report["adoption"], report["use"]
    totals = report["injection"]["totals"]
    headline = [
        ("sessions", str(report["sessions"])),
        ("memories delivered", f"{totals['delivered']} ({totals['distinct_delivered']} distinct)"),
        ("deliveries then used", _pct(use["used_share"])),
        ("consequential turns with a store decision", _pct(adoption["share"])),
        ("… gated / voluntary", f"{adoption['gated']} / {adoption['voluntary']}"),
        ("fail-opens", str(report["health"]["failed_open"])),
    ]
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in headline)
    body = (
        f"<h1>gate stats — {html.escape(str(scope))}</h1>"
        f"<p class=axis>{html.escape(str(report['first']))} → {html.escape(str(report['last']))}</p>"
        f"<table>{rows}</table>"
        + (
            _chart("Memory delivered: fires per day", days, DELIVERY_SERIES)
            + _chart("Write-back: how consequential turns ended, per day", days, WRITEBACK_SERIES)
            if days
            else "<p>No activity yet: check the wiring with <code>gate doctor</code>.</p>"
        )
    )
    style = (
        "body{font:14px system-ui,sans-serif;margin:2em auto;max-width:760px;color:#222}"
        "th{text-align:left;font-weight:normal;color:#555;padding-right:1.5em}td{font-weight:600}"
        ".axis{font-size:10px;fill:#777;color:#777}.legend span{margin-right:1em}"
        ".legend i{display:inline-block;width:10px;height:10px;margin-right:4px}"
    )
    return f'<!doctype html><meta charset="utf-8"><title>gate stats</title><style>{style}</style>{body}\n'


def write_html(path: Path, selection: Selection, report: dict[str, Any]) -> None:
    records, _ = select(read_audit(), selection)
    path.write_text(render_html(report, daily(records)), encoding="utf-8")
