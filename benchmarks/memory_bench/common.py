"""Shared helpers of the database benchmarks (write, retrieve, lifecycle).

Pure helpers (percentiles, synthetic text, vectors, row building) have no I/O and
are unit-tested; the rest drives a real container built on `--data-dir`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.domain.enums import Authority, MemoryType, Role, Sensitivity

DIM = 384
TENANT = "bench"
EMBEDDER_NAME = "local-minilm-onnx"
LOADER = "bench-loader"  # the actor of the datasets' bulk loads


# --------------------------------------------------------------------------- statistics
def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), q in [0, 100]; NaN when empty."""
    if not values:
        return float("nan")
    xs = sorted(values)
    if len(xs) == 1:
        return float(xs[0])
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return float(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))


def summarize_ms(seconds: Sequence[float], prefix: str = "") -> dict[str, float]:
    """p50/p95/p99/max in milliseconds from latencies in seconds, rounded to 3 decimals."""
    ms = [s * 1000.0 for s in seconds]
    out = {
        f"{prefix}p50_ms": percentile(ms, 50),
        f"{prefix}p95_ms": percentile(ms, 95),
        f"{prefix}p99_ms": percentile(ms, 99),
        f"{prefix}max_ms": max(ms) if ms else float("nan"),
    }
    return {k: round(v, 3) for k, v in out.items()}


def ratio(a: float, b: float) -> float:
    return round(a / b, 2) if b else float("nan")


# --------------------------------------------------------------------------- machine state
def machine_state() -> dict[str, Any]:
    """What else ran: load average, CPUs, memory, free disk (the machine is shared and noisy)."""
    state: dict[str, Any] = {"cpus": os.cpu_count(), "python": platform.python_version()}
    with contextlib.suppress(OSError):
        state["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    with contextlib.suppress(OSError, ValueError):
        mem = dict(
            line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines() if ":" in line
        )
        state["mem_available_gib"] = round(int(mem["MemAvailable"].split()[0]) / 2**20, 1)
    return state


class CpuSampler:
    """Samples /proc/stat while a phase runs: how busy the whole machine was (all processes)."""

    def __init__(self) -> None:
        self.start = self._read()

    @staticmethod
    def _read() -> tuple[int, int]:
        try:
            fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        except OSError:
            return (0, 0)
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return (sum(fields), idle)

    def busy_pct(self) -> float:
        end = self._read()
        total, idle = end[0] - self.start[0], end[1] - self.start[1]
        return round(100.0 * (total - idle) / total, 1) if total else float("nan")


def pg_cpu_seconds(data_dir: Path | None) -> float:
    """CPU seconds used so far by the embedded server: postmaster + live backends + reaped children."""
    if data_dir is None:
        return float("nan")
    try:
        master = int((Path(data_dir) / "pg" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        pid, ppid = int(entry), int(fields[1])
        if pid == master or ppid == master:
            total += int(fields[11]) + int(fields[12])  # utime, stime
            if pid == master:
                total += int(fields[13]) + int(fields[14])  # cutime, cstime (exited backends)
    return total / tick


# --------------------------------------------------------------------------- synthetic content
PEOPLE = [
    "Ana Ruiz",
    "Ben Okafor",
    "Chloe Martin",
    "Dev Patel",
    "Elena Rossi",
    "Farid Haddad",
    "Grace Liu",
    "Hugo Weber",
    "Ines Costa",
    "Jon Berg",
    "Kira Novak",
    "Leo Schmidt",
    "Maya Cohen",
    "Nils Larsen",
    "Olga Ivanova",
    "Pedro Alves",
    "Quinn Baker",
    "Rosa Diaz",
    "Sam Taylor",
    "Tara Singh",
]
ROLES = [
    "CFO",
    "IT director",
    "procurement lead",
    "head of support",
    "CTO",
    "operations manager",
    "security officer",
    "finance analyst",
    "project sponsor",
    "office manager",
]
TOPICS = [
    "the annual renewal",
    "invoice discrepancies",
    "SSO rollout",
    "data export",
    "API rate limits",
    "onboarding new staff",
    "the mobile app crash",
    "report scheduling",
    "a billing address change",
    "the Q3 roadmap",
    "a security questionnaire",
    "migrating from the legacy CRM",
    "email deliverability",
    "training sessions",
    "the dashboard performance",
    "GDPR data requests",
    "a contract amendment",
    "webhook failures",
    "user provisioning",
    "the Salesforce integration",
]
DETAILS = [
    "they were frustrated by slow responses",
    "they asked for a written summary",
    "the issue affects their EU team",
    "they want a fix before month end",
    "they compared us to a competitor",
    "the workaround is acceptable for now",
    "they plan to add two departments",
    "legal needs to review the wording",
    "the previous agent promised a callback",
    "they praised the quick turnaround",
    "budget approval is pending",
    "they escalated internally",
    "it only happens on Mondays",
    "they need it in Spanish too",
    "their auditor asked about retention",
]
ACTIONS = [
    "send the revised quote",
    "schedule a follow-up call",
    "open an engineering ticket",
    "share the export guide",
    "loop in the account manager",
    "confirm the new billing contact",
    "book a training slot",
    "check the webhook logs",
    "send the security whitepaper",
    "close the ticket",
]
CHANNELS = ["email", "phone", "Slack", "the customer portal", "SMS", "video calls"]
TIMES = ["mornings", "afternoons", "Tuesdays", "after 4pm", "before noon", "Fridays"]
LANGS = ["English", "Spanish", "German", "French", "Portuguese", "Italian"]
STACKS = ["Okta SSO", "Azure AD", "Google Workspace", "Salesforce", "HubSpot", "SAP", "Zendesk", "Jira"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
QUERIES = [
    "How should we contact them about the renewal?",
    "What did the customer say about invoices last time?",
    "Who is the main stakeholder for the SSO project?",
    "Any open issues with the mobile app?",
    "What language does the customer prefer?",
    "What did we promise on the last call?",
    "Is there anything about data export or GDPR requests?",
    "Which identity provider do they use?",
    "Summarize recent frustrations and escalations",
    "When do they prefer meetings?",
    "What is the status of the webhook failures?",
    "Did they ask for a written summary?",
    "Who handles procurement and budget approval?",
    "What integrations do they rely on?",
    "Was there a billing address change?",
    "Any feedback on training sessions?",
    "What did the CFO say about the contract amendment?",
    "Are they comparing us with a competitor?",
    "What follow-up actions are pending?",
    "How did the dashboard performance issue end?",
]

SLOTS: list[tuple[str, MemoryType, str | None]] = [
    ("preference.contact_channel", MemoryType.PREFERENCE, None),
    ("preference.meeting_time", MemoryType.PREFERENCE, None),
    ("preference.language", MemoryType.PREFERENCE, None),
    ("account.primary_contact", MemoryType.FACT, "STAKEHOLDER"),
    ("account.billing_contact", MemoryType.FACT, "STAKEHOLDER"),
    ("environment.identity_provider", MemoryType.FACT, "TECHNICAL_ENVIRONMENT"),
    ("environment.crm", MemoryType.FACT, "TECHNICAL_ENVIRONMENT"),
    ("account.industry", MemoryType.FACT, "ACCOUNT_PROFILE"),
    ("contract.renewal_terms", MemoryType.FACT, "CONTRACT_COMMERCIAL"),
]


def slot_content(slot: str, rng: random.Random) -> str:
    if slot == "preference.contact_channel":
        return f"Prefers {rng.choice(CHANNELS)} for {rng.choice(TOPICS)}, not {rng.choice(CHANNELS)}."
    if slot == "preference.meeting_time":
        return f"Prefers meetings on {rng.choice(TIMES)}; avoid {rng.choice(TIMES)}."
    if slot == "preference.language":
        return f"Prefers to be addressed in {rng.choice(LANGS)}, documents in {rng.choice(LANGS)}."
    if slot in ("account.primary_contact", "account.billing_contact"):
        return f"{slot.split('.')[1].replace('_', ' ').capitalize()} is {rng.choice(PEOPLE)}, {rng.choice(ROLES)}."
    if slot == "environment.identity_provider":
        return f"Uses {rng.choice(STACKS)} for identity, rolled out to {rng.randint(20, 900)} users."
    if slot == "environment.crm":
        return f"Runs {rng.choice(STACKS)} as CRM with {rng.randint(2, 40)} custom objects."
    if slot == "account.industry":
        return f"Operates in {rng.choice(['logistics', 'retail', 'banking', 'healthcare', 'education'])}."
    return f"Renewal at {rng.randint(5, 40)}% discount for {rng.randint(1, 3)} years, net {rng.choice([30, 45, 60])}."


def episode_content(rng: random.Random, serial: int) -> tuple[str, str]:
    """A support/CS episode and its meaning key (the part an embedding cares about);
    `serial` makes the text distinct (dedupe must not short-circuit)."""
    gist = f"discussed {rng.choice(TOPICS)}; {rng.choice(DETAILS)}. Next step: {rng.choice(ACTIONS)}."
    return (
        f"{rng.choice(WEEKDAYS)} call #{serial} with {rng.choice(PEOPLE)} ({rng.choice(ROLES)}): {gist}",
        gist,
    )


def slot_gist(slot: str) -> str:
    return {
        "preference.contact_channel": "Preferred contact channel for the customer",
        "preference.meeting_time": "Preferred meeting times",
        "preference.language": "Preferred language for communication",
        "account.primary_contact": "Primary contact and main stakeholder",
        "account.billing_contact": "Billing contact for invoices",
        "environment.identity_provider": "Identity provider used for SSO",
        "environment.crm": "CRM system and integrations",
        "account.industry": "Industry the customer operates in",
    }.get(slot, "Contract renewal terms and discount")


def unit_vectors(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    v = rng.standard_normal((n, dim), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def near(base: np.ndarray, rng: np.random.Generator, noise: float) -> np.ndarray:
    """A unit vector near `base` (rows): base + gaussian noise, renormalised."""
    v = base + rng.standard_normal(base.shape, dtype=np.float32) * np.float32(noise / np.sqrt(base.shape[-1]))
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    return v.astype(np.float32)


# --------------------------------------------------------------------------- containers
def quiet_logs() -> None:
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    import logging

    logging.getLogger("agent_memory").setLevel(logging.WARNING)
    with contextlib.suppress(Exception):
        from agent_memory.observability import logger

        logger.setLevel("WARNING")


def build(
    data_dir: Path | None = None,
    *,
    database_url: str | None = None,
    embedder: Any = None,
    pool_max_size: int = 8,
    migrate: bool = True,
    policy: str = "crm",
) -> Any:
    """A container on the embedded PostgreSQL in `data_dir` (or `database_url`)."""
    quiet_logs()
    from agent_memory.bootstrap import build_container
    from agent_memory.config import Settings

    kwargs: dict[str, Any] = {
        "pool_max_size": pool_max_size,
        "pool_min_size": 1,
        "migrate_on_start": migrate,
        "default_policy": policy,
    }
    if data_dir is not None:
        kwargs["data_dir"] = Path(data_dir)
    if database_url is not None:
        kwargs["database_url"] = database_url
    return build_container(Settings(**kwargs), embedder=embedder)


class PrecomputedEmbedder:
    """Stands in for MiniLM in processes that only ever pass precomputed vectors (no model load).
    Named like MiniLM so the similarity floor is the one calibrated for it."""

    name = EMBEDDER_NAME
    dimension = DIM

    def embed(self, texts: list[str]) -> np.ndarray:
        raise RuntimeError("this benchmark passes precomputed vectors; nothing should embed")


def owner_url(container: Any) -> str:
    url = container.db.url
    return url() if callable(url) else str(url)


def principal(tenant: str = TENANT, *roles: Role, clearance: Sensitivity = Sensitivity.CONFIDENTIAL) -> Any:
    from agent_memory.domain.records import Principal

    return Principal(
        sub="bench",
        tenant_id=tenant,
        roles=frozenset(roles or (Role.AGENT, Role.INTEGRATION)),
        clearance=clearance,
    )


def reset_data_dir(data_dir: Path) -> None:
    """Stop an embedded server left running in data_dir and delete the folder."""
    pg = data_dir / "pg"
    if (pg / "postmaster.pid").exists():
        with contextlib.suppress(Exception):
            from agent_memory.local.embedded import embedded_server

            embedded_server(pg, cleanup_mode="stop").cleanup()
    shutil.rmtree(data_dir, ignore_errors=True)


def stop_server(data_dir: Path, *, delete: bool) -> None:
    """Stop the embedded server (and delete the data when asked)."""
    with contextlib.suppress(Exception):
        from agent_memory.local.embedded import embedded_server

        embedded_server(data_dir / "pg", cleanup_mode="delete" if delete else "stop").cleanup()
    if delete:
        shutil.rmtree(data_dir, ignore_errors=True)


DATA_DIR_HELP = "where the embedded PostgreSQL keeps the dataset (default: a new temporary folder)"


def data_dir_or_temporary(given: Path | None, bench: str) -> Path:
    """The data dir given, or a new temporary folder, named on stderr (so that a `--keep` run can be
    reused with `--data-dir`)."""
    if given is not None:
        return given
    path = Path(tempfile.mkdtemp(prefix=f"memory-bench-{bench}-"))
    print(f"memory bench {bench}: data dir {path}", file=sys.stderr)
    return path


def dir_size_gib(path: Path) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, f))
    return round(total / 2**30, 2)


# --------------------------------------------------------------------------- SQL profile
@dataclass
class _Stat:
    calls: int = 0
    seconds: float = 0.0


class SqlProfile:
    """Client-side wall time per SQL statement kind (round trip + server), plus COMMIT.

    Patches psycopg at class level while active; `label` is the statement's first words.
    """

    def __init__(self) -> None:
        self.stats: dict[str, _Stat] = defaultdict(_Stat)
        self._lock = threading.Lock()

    @staticmethod
    def label(query: Any) -> str:
        text = (
            query if isinstance(query, str) else str(getattr(query, "as_string", lambda _c=None: query)(None))
        )
        words = " ".join(text.split())
        if words.startswith("WITH"):
            return words[:70]
        return words[:55]

    def add(self, label: str, seconds: float) -> None:
        with self._lock:
            s = self.stats[label]
            s.calls += 1
            s.seconds += seconds

    @contextlib.contextmanager
    def active(self) -> Iterator[SqlProfile]:
        import psycopg

        conn_execute = psycopg.Connection.execute
        cur_execute = psycopg.Cursor.execute
        cur_many = psycopg.Cursor.executemany
        tx_exit = psycopg.Transaction.__exit__
        prof = self

        def c_exec(self_: Any, query: Any, params: Any = None, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return conn_execute(self_, query, params, **kw)
            finally:
                prof.add(prof.label(query), time.perf_counter() - t)

        def k_many(self_: Any, query: Any, params_seq: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return cur_many(self_, query, params_seq, **kw)
            finally:
                prof.add("executemany " + prof.label(query), time.perf_counter() - t)

        def t_exit(self_: Any, *exc: Any) -> Any:
            t = time.perf_counter()
            try:
                return tx_exit(self_, *exc)
            finally:
                prof.add("COMMIT (transaction exit)", time.perf_counter() - t)

        psycopg.Connection.execute = c_exec  # type: ignore[method-assign,assignment]
        psycopg.Cursor.executemany = k_many  # type: ignore[method-assign,assignment]
        psycopg.Transaction.__exit__ = t_exit  # type: ignore[method-assign]
        try:
            yield self
        finally:
            psycopg.Connection.execute = conn_execute  # type: ignore[method-assign]
            psycopg.Cursor.execute = cur_execute  # type: ignore[method-assign]
            psycopg.Cursor.executemany = cur_many  # type: ignore[method-assign]
            psycopg.Transaction.__exit__ = tx_exit  # type: ignore[method-assign]

    def report(self, per: int, total_s: float) -> list[dict[str, Any]]:
        """Top statements by time, in ms per operation and share of the measured wall time."""
        rows = sorted(self.stats.items(), key=lambda kv: -kv[1].seconds)
        return [
            {
                "sql": k,
                "calls_per_op": round(v.calls / per, 2),
                "ms_per_op": round(v.seconds / per * 1000, 3),
                "share_pct": round(100 * v.seconds / total_s, 1) if total_s else None,
            }
            for k, v in rows[:14]
        ]


def cprofile_top(fn: Any, n: int = 18) -> tuple[Any, list[dict[str, Any]]]:
    """Run fn under cProfile; the top functions by cumulative time, package-relative names."""
    import cProfile
    import pstats

    pr = cProfile.Profile()
    pr.enable()
    try:
        result = fn()
    finally:
        pr.disable()
    st = pstats.Stats(pr)
    total = max((v[3] for v in st.stats.values()), default=0.0)  # type: ignore[attr-defined]
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        short = file.split("site-packages/")[-1].split("python/agent_memory/")[-1]
        rows.append(
            {"fn": f"{short}:{line}({func})", "calls": nc, "self_s": round(tt, 3), "cum_s": round(ct, 3)}
        )
    rows.sort(key=lambda r: -r["cum_s"])
    top_self = sorted(rows, key=lambda r: -r["self_s"])[:n]
    return result, [{"total_s": round(total, 3)}, {"by_cumulative": rows[:n]}, {"by_self": top_self}]


# --------------------------------------------------------------------------- bulk load
_AUTH_FOR_TYPE = {
    MemoryType.EPISODE: Authority.CUSTOMER_CLAIM,
    MemoryType.PREFERENCE: Authority.CUSTOMER_CONFIRMED,
    MemoryType.FACT: Authority.CUSTOMER_CONFIRMED,
    MemoryType.RESOLUTION: Authority.CONFIRMED_OUTCOME,
}


@dataclass
class SubjectPlan:
    """What one synthetic subject holds; built deterministically from (seed, subject index)."""

    subject_id: str
    per_subject: int


def subject_id(i: int) -> str:
    return f"ACC-{i:07d}"


def plan_subject_rows(
    idx: int,
    per_subject: int,
    rng: random.Random,
    now: datetime,
    *,
    expired_share: float = 0.0,
    inactive_share: float = 0.05,
) -> list[dict[str, Any]]:
    """Rows of one subject: ~15% slotted facts/preferences (one active per slot), the rest episodes and
    resolutions; `inactive_share` superseded older versions; `expired_share` active rows past expires_at
    (what the nightly purge removes); ~10% confidential, ~2% restricted (above the bench clearance)."""
    sid = subject_id(idx)
    rows: list[dict[str, Any]] = []
    n_slots = min(len(SLOTS) - 1, max(1, round(per_subject * 0.15)))
    slots = rng.sample(SLOTS[:-1], n_slots)
    for k in range(per_subject):
        age_days = rng.uniform(0, 700)
        created = now - timedelta(days=age_days)
        if k < len(slots):
            slot, mtype, category = slots[k]
            content, gist = slot_content(slot, rng), slot_gist(slot)
        else:
            slot, category = None, None
            mtype = MemoryType.RESOLUTION if rng.random() < 0.1 else MemoryType.EPISODE
            content, gist = episode_content(rng, idx * 1000 + k)
            if mtype is MemoryType.RESOLUTION:
                content = "Resolved: " + content
        authority = _AUTH_FOR_TYPE[mtype]
        r = rng.random()
        sensitivity = (
            Sensitivity.RESTRICTED
            if r < 0.02
            else Sensitivity.CONFIDENTIAL
            if r < 0.12
            else Sensitivity.INTERNAL
        )
        status, expires_at, valid_to, superseded_at = "active", None, None, None
        x = rng.random()
        if x < expired_share:
            expires_at = now - timedelta(days=rng.uniform(1, 30))
        elif x < expired_share + inactive_share and slot is None:
            status, valid_to, superseded_at = (
                "superseded",
                created + timedelta(days=1),
                created + timedelta(days=1),
            )
        elif slot is None and mtype is MemoryType.EPISODE:
            expires_at = now + timedelta(days=rng.uniform(30, 365))
        session = f"ses-{idx}-{k // 4}"
        rows.append(
            {
                "subject_id": sid,
                "type": mtype.value,
                "category": category or mtype.value.upper(),
                "slot": slot,
                "content": content,
                "authority": authority,
                "sensitivity": sensitivity,
                "status": status,
                "created_at": created,
                "effective_at": created,
                "valid_to": valid_to,
                "superseded_at": superseded_at,
                "expires_at": expires_at,
                "session_id": session,
                "lineage_keys": [f"session:{session}"],
                "gist": gist,
            }
        )
    return rows


def planned_record(plan: dict[str, Any], tenant: str, serial: int) -> Any:
    """The MemoryRecord of a planned row, as the gateway would have stored it (no vector here)."""
    from agent_memory.domain.hashing import content_hash
    from agent_memory.domain.records import MemoryRecord

    auth: Authority = plan["authority"]
    active = plan["status"] == "active"
    return MemoryRecord(
        id=f"mem_{int(plan['created_at'].timestamp() * 1000):012x}{serial:016x}",
        tenant_id=tenant,
        subject_id=plan["subject_id"],
        session_id=plan["session_id"],
        type=plan["type"],
        category=plan["category"],
        slot=plan["slot"],
        content=plan["content"],
        source={"kind": auth.value, "system": "bench"},
        actor=LOADER,
        authority=auth,
        confidence=0.8,
        importance=0.5,
        sensitivity=plan["sensitivity"],
        status=plan["status"],
        created_at=plan["created_at"],
        effective_at=plan["effective_at"],
        valid_to=plan["valid_to"],
        last_validated_at=plan["created_at"] if active else None,
        expires_at=plan["expires_at"],
        superseded_by_id=None if active else "mem_superseded",
        superseded_at=plan["superseded_at"],
        lineage_keys=plan["lineage_keys"],
        content_hash=content_hash(plan["subject_id"], plan["type"], plan["slot"], plan["content"]),
        embedding_model=EMBEDDER_NAME if active else None,
    )


@contextlib.contextmanager
def owner_connection(url: str, tenant: str) -> Iterator[Any]:
    """A connection as the table owner with the tenant set (FORCE RLS applies to the owner too)."""
    import psycopg
    from pgvector.psycopg import register_vector

    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SELECT set_config('app.tenant_id', %s, false)", (tenant,))
        yield conn


def load_dataset(
    container: Any,
    *,
    subjects: int,
    per_subject: int,
    seed: int,
    hnsw: bool,
    expired_share: float = 0.0,
    vectors: Any = None,
    tenant: str = TENANT,
    first_subject: int = 0,
    log_every: int = 100_000,
    extra: Sequence[tuple[int, int]] = (),
    sentences: bool = False,
) -> dict[str, Any]:
    """Synthetic memories bulk-loaded into memory_records (`adapters.postgres.bulk_load`, no gateway):
    subject i gets `per_subject` rows (and each (index, rows) of `extra` its own count, none expired);
    `vectors(rng, plans)` gives their embeddings (random unit vectors by default); an inactive row
    keeps none. The secondary indexes are rebuilt after the COPY, the HNSW index only when `hnsw`
    (per-subject search never uses it). `sentences`: as the write path does, an active memory whose
    content splits into several sentences gets a vector per sentence (near the memory's own)."""
    from agent_memory.adapters.postgres.bulk_load import LoadRow, load_records
    from agent_memory.domain.sentences import split_sentences

    rng = random.Random(seed)  # noqa: S311 - synthetic data, not security
    nrng = np.random.default_rng(seed)
    now = datetime.now(UTC)
    make_vectors = vectors or (lambda g, plans: unit_vectors(g, len(plans)))
    serial = [first_subject * per_subject]
    total = subjects * per_subject + sum(n for _, n in extra)
    t0 = time.perf_counter()
    shape = [(i, per_subject, expired_share) for i in range(first_subject, first_subject + subjects)]
    shape += [(i, n, 0.0) for i, n in extra]

    def batches() -> Iterator[list[LoadRow]]:
        batch: list[LoadRow] = []
        for i, n_rows, share in shape:
            plans = plan_subject_rows(i, n_rows, rng, now, expired_share=share)
            vecs = make_vectors(nrng, plans)
            for p, v in zip(plans, vecs, strict=True):
                serial[0] += 1
                active = p["status"] == "active"
                chunks = split_sentences(p["content"]) if sentences and active else []
                batch.append(
                    LoadRow(
                        planned_record(p, tenant, serial[0]),
                        v if active else None,
                        list(near(np.stack([v] * len(chunks)), nrng, noise=0.35)) if chunks else (),
                    )
                )
            if len(batch) >= 20_000:
                yield batch
                batch = []
        if batch:
            yield batch

    def progress(done: int) -> None:
        if done % log_every < 20_000:
            el = time.perf_counter() - t0
            print(f"  loaded {done:,}/{total:,} rows in {el:.0f}s ({done / el:,.0f} rows/s)", flush=True)

    loaded = load_records(
        owner_url(container),
        tenant,
        batches(),
        actor=LOADER,
        defer_indexes=True,
        rebuild=lambda name, ddl: hnsw or "hnsw" not in ddl,
        on_batch=progress,
    )
    return {
        "rows": loaded.records,
        "sentence_rows": loaded.sentences,
        "copy_s": loaded.copy_s,
        "index_build_s": loaded.index_build_s,
        "indexes": loaded.rebuilt_indexes,
        "hnsw_index": hnsw,
        "vacuum_analyze_s": loaded.vacuum_analyze_s,
        "load_s": round(time.perf_counter() - t0, 1),
    }


def dataset_marker(data_dir: Path) -> Path:
    return Path(data_dir) / "bench-dataset.json"


def read_marker(data_dir: Path) -> dict[str, Any] | None:
    p = dataset_marker(data_dir)
    return json.loads(p.read_text()) if p.exists() else None


def write_marker(data_dir: Path, info: dict[str, Any]) -> None:
    dataset_marker(data_dir).write_text(json.dumps(info, indent=2, default=str))


def stable_seed(*parts: Any) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


# --------------------------------------------------------------------------- client processes
def timed_loop(
    prepare: Callable[[], Callable[[], object]], start_at: float, seconds: float
) -> tuple[list[float], int, float]:
    """In a client process: wait for the wall-clock `start_at`, then call for `seconds`. `prepare()` picks
    the next request (not timed) and returns the call to time. Returns the latencies of the calls that
    succeeded, the number that raised, and the process's CPU seconds."""
    while time.time() < start_at:
        time.sleep(0.001)
    end = start_at + seconds
    cpu0 = time.process_time()
    lat: list[float] = []
    errors = 0
    while True:
        call = prepare()
        t = time.perf_counter()
        if time.time() >= end:
            break
        try:
            call()
        except Exception:
            errors += 1
            continue
        lat.append(time.perf_counter() - t)
    return lat, errors, time.process_time() - cpu0


@dataclass
class PoolRun:
    """One timed run of a pool's first n clients, added up."""

    latencies: list[float]
    errors: int
    client_cpu_s: float
    server_cpu_s: float
    machine_busy_pct: float


class ProcessPool:
    """N client processes, spawned once and kept for every run. `target(idx, *args(idx), cmd_q, out_q)`
    says ("ready", idx) when set up, then for each command from its queue either answers it its own way
    or runs `timed_loop` and says ("done", idx, latencies, errors, cpu_s); None ends it."""

    def __init__(
        self, n: int, target: Callable[..., None], args: Callable[[int], tuple[Any, ...]], data_dir: Path
    ) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self.data_dir = data_dir
        self.out_q = ctx.Queue()
        self.cmd_qs = [ctx.Queue() for _ in range(n)]
        self.procs = [
            ctx.Process(target=target, args=(*args(i), self.cmd_qs[i], self.out_q), daemon=True)
            for i in range(n)
        ]
        for pr in self.procs:
            pr.start()
        for _ in range(n):
            self.get("ready")

    def get(self, kind: str, timeout: float = 600) -> Any:
        msg = self.out_q.get(timeout=timeout)
        if msg[0] != kind:
            raise RuntimeError(f"client said {msg!r}, expected {kind}")
        return msg

    def send(self, n: int, cmd: tuple[Any, ...]) -> None:
        for q in self.cmd_qs[:n]:
            q.put(cmd)

    def timed(self, n: int, cmd: Callable[[float], tuple[Any, ...]], seconds: float) -> PoolRun:
        """The first n clients run `cmd(start_at)` together, starting half a second from now."""
        start_at = time.time() + 0.5
        busy = CpuSampler()
        pg0 = pg_cpu_seconds(self.data_dir)
        self.send(n, cmd(start_at))
        lat: list[float] = []
        errors, client_cpu = 0, 0.0
        for _ in range(n):
            _, _, worker_lat, worker_err, cpu = self.get("done", timeout=seconds + 600)
            lat.extend(worker_lat)
            errors += worker_err
            client_cpu += cpu
        server_cpu = pg_cpu_seconds(self.data_dir) - pg0
        return PoolRun(lat, errors, client_cpu, server_cpu, busy.busy_pct())

    def close(self) -> None:
        for q in self.cmd_qs:
            q.put(None)
        for pr in self.procs:
            pr.join(timeout=30)
            if pr.is_alive():
                pr.terminate()
