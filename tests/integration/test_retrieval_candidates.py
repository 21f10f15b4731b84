"""The candidate query's two paths, on the real embedded PostgreSQL: a small subject's rows come back
whole and unranked, a larger one's as the top n per signal, and the broker ranks both the same way."""

import re
from datetime import UTC, datetime

import numpy as np
import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.services.retrieval import RetrieveRequest

pytestmark = pytest.mark.integration

TENANT = "tenant-cand"
AGENT = Principal(sub="agent@cand", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
TOPICS = [
    "renewal pricing for the extra analytics seats",
    "prefers a Tuesday morning call with the finance lead",
    "the SSO rollout slipped to the next sprint",
    "invoice exports fail for the EMEA entity",
    "asked for the quarterly roadmap deck",
    "the onboarding webinar was rated excellent",
    "wants the data retention policy in writing",
    "migrated the reporting dashboards last week",
    "complained about slow search in the admin console",
    "the champion is moving to a new team",
    "budget approval for next year is pending",
    "requested a sandbox for the integration tests",
]


@pytest.fixture(scope="module")
def subject(container):
    for i, text in enumerate(TOPICS):
        container.gateway.write(
            AGENT,
            MemoryWrite(
                subject_id="S-CAND",
                type="episode",
                content=f"Customer {text} (note {i})",
                source={"kind": "customer_confirmed"},
            ),
        )
    return "S-CAND"


def candidates(container, subject: str, query: str, per_signal: int):
    vector = container.embedder.embed([query])[0]
    with container.store.reader(TENANT) as session:  # as the broker reads: one statement, no transaction
        return session.retrieval_candidates(
            subject_id=subject,
            query_embedding=vector,
            query_text=query,
            types=None,
            max_sensitivity_rank=2,
            now=datetime.now(UTC),
            per_signal=per_signal,
        )


def test_given_a_subject_within_the_limit_when_searched_then_every_row_returns_unranked(container, subject):
    rows = candidates(container, subject, "renewal pricing for seats", per_signal=50)
    assert len(rows) == len(TOPICS)
    assert all(r.lexical is None for r in rows)  # SQL did not rank them
    assert all(r.similarity is not None and r.length > 0 for r in rows)
    assert rows[0].query_lexemes and "renew" in rows[0].query_lexemes


def test_given_a_subject_over_the_limit_when_searched_then_only_the_top_n_per_signal_return(
    container, subject
):
    query = "renewal pricing for seats"
    everything = candidates(container, subject, query, per_signal=50)
    top = candidates(container, subject, query, per_signal=2)
    assert all(r.lexical is not None for r in top)
    # at most two per signal: vector, sentence vector, text (the subject has no verified facts)
    assert 2 <= len(top) <= 6 < len(everything)
    by_vector = sorted(everything, key=lambda r: (-(r.similarity or 0), r.facts.id))[:2]
    assert {r.facts.id for r in by_vector} <= {r.facts.id for r in top}
    matched = [r for r in top if r.lexical and r.lexical > 0]
    assert matched and all({"renew", "price", "seat"} & r.term_counts.keys() for r in matched)


def test_given_either_path_when_the_broker_ranks_then_it_returns_the_same_memories(
    container, subject, monkeypatch
):
    import agent_memory.services.retrieval as retrieval

    request = RetrieveRequest(subject_id=subject, query="renewal pricing for the extra seats", top_k=2)
    unranked = container.broker.retrieve(AGENT, request)  # per signal max(50, 4 * 2): 12 rows fit
    monkeypatch.setattr(retrieval, "CANDIDATES_PER_SIGNAL", 11)  # 12 rows > 11: SQL ranks them
    ranked = container.broker.retrieve(AGENT, request)
    assert ranked.candidates < unranked.candidates == len(TOPICS)
    # scores are normalised over the candidates, so they differ; the order of what is returned does not
    assert [m["id"] for m in unranked.memories] == [m["id"] for m in ranked.memories]
    assert "renewal pricing" in unranked.memories[0]["content"]


def test_given_a_memory_without_vector_or_match_when_searched_then_neither_path_returns_it(
    container, database_url
):
    import psycopg

    # Given a subject whose memories include two without a vector (written while the embedder was down)
    ids = [
        container.gateway.write(
            AGENT,
            MemoryWrite(
                subject_id="S-NOVEC", type="episode", content=text, source={"kind": "customer_confirmed"}
            ),
        ).memory.id
        for text in (
            "Customer asked about renewal pricing for seats",
            "Customer prefers invoices by post",
            "Customer renewal was signed by the CFO",
        )
    ]
    with psycopg.connect(database_url, autocommit=True) as owner:
        owner.execute("UPDATE memory_records SET embedding = NULL WHERE id = ANY(%s)", ([ids[1], ids[2]],))
    # When it is searched by either path
    for per_signal in (50, 2):  # 3 rows: unranked, then the top 2 per signal
        found = {
            r.facts.id for r in candidates(container, "S-NOVEC", "renewal pricing", per_signal=per_signal)
        }
        # Then the vectorless memory with no query term is not a candidate; the one with a term is
        assert ids[1] not in found, per_signal
        assert ids[2] in found and ids[0] in found, per_signal


def test_given_a_version_number_when_searched_then_both_paths_match_the_same_text(container):
    # Given a subject with a memory naming a version, among others
    texts = ["Customer upgraded the agent to v2.3.1 on Monday"] + [
        f"{t} ({i})" for i, t in enumerate(TOPICS[:4])
    ]
    for text in texts:
        container.gateway.write(
            AGENT,
            MemoryWrite(
                subject_id="S-VER", type="episode", content=text, source={"kind": "customer_confirmed"}
            ),
        )
    # When the version is searched unranked (small subject) and ranked (top 1 per signal)
    unranked = candidates(container, "S-VER", "v2.3.1", per_signal=50)
    ranked = candidates(container, "S-VER", "v2.3.1", per_signal=1)
    # Then the same memory matches the text in both
    matched_unranked = {r.facts.id for r in unranked if r.term_counts}
    matched_ranked = {r.facts.id for r in ranked if r.lexical}
    assert len(matched_unranked) == 1 and matched_unranked == matched_ranked


@pytest.fixture(scope="module")
def commitment(container, subject):
    """A memory with a source, a value and an expiry, among the subject's others (written last:
    the tests above count the subject's rows)."""
    return container.gateway.write(
        AGENT,
        MemoryWrite(
            subject_id=subject,
            type="commitment",
            content="Will send the renewal pricing sheet for the analytics seats",
            value={"owner": "agent-3", "due": "2026-12-04"},
            source={"kind": "agent_inference", "system": "chat", "reference": "sess-7"},
            expires_at=datetime(2027, 1, 1, tzinfo=UTC),
        ),
    ).memory


@pytest.mark.parametrize("per_signal", [50, 2], ids=["small path", "large path"])
def test_given_either_path_when_a_row_is_shown_then_it_is_the_stored_record(
    container, subject, commitment, per_signal
):
    written = commitment
    # When the candidates are read for a query that finds it
    rows = candidates(container, subject, "renewal pricing sheet for analytics seats", per_signal)
    row = next(r for r in rows if r.facts.id == written.id)
    shown = row.memory()
    # Then what is shown is what was stored, and the vector is the stored one
    assert (shown.content, shown.category, shown.value, shown.source, shown.expires_at) == (
        written.content,
        written.category,
        written.value,
        written.source,
        written.expires_at,
    )
    assert (shown.type, shown.authority, shown.slot, shown.session_id) == (
        written.type,
        written.authority,
        written.slot,
        written.session_id,
    )
    stored = container.embedder.embed([written.content])[0]
    assert row.embedding is not None and row.embedding.dtype == np.float32
    assert np.allclose(row.embedding, stored, atol=1e-6)


_ENTRY = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def reference_tokens(tsvector_text: str) -> list[str]:
    """Every lexeme once per position, by parsing each entry of `tsvector::text` (the slow,
    obvious way: what BM25's counts mean)."""
    out: list[str] = []
    for lexeme, positions in _ENTRY.findall(tsvector_text):
        out.extend([lexeme.replace("''", "'")] * (positions.count(",") + 1 if positions else 1))
    return out


TRICKY = [
    "Customer renewed the renewal, is renewing and renews: RENEWAL!",
    "O'Brien's team can't renew until 2026-03-12 at 12:30pm",
    "v2.3.1 upgrade; email ops@example.com about the 1,000 seats and seat-based pricing",
    "the and of it is",  # only stop words: an empty tsvector
    "café naïve résumé renewal 東京 seats",
    r"quotes ' '' ''' and back\slashes \' in renewal notes",
    " ".join(["seat"] * 300),  # more positions than a tsvector keeps for one lexeme
    "Seats: 40. Seats? 41! seats; 42 - seats",
]


@pytest.fixture(scope="module")
def tricky(container):
    return {
        container.gateway.write(
            AGENT,
            MemoryWrite(
                subject_id="S-COUNT", type="episode", content=t, source={"kind": "customer_confirmed"}
            ),
        ).memory.id
        for t in TRICKY
    }


@pytest.mark.parametrize("per_signal", [50, 2], ids=["small path", "large path"])
def test_given_any_text_when_the_sql_counts_terms_then_they_match_a_full_parse_of_its_tsvector(
    container, database_url, tricky, per_signal
):
    import psycopg

    # Given memories whose text stresses the full-text parser (stems, quotes, positions cap, stop words)
    # When the candidates are read for a query naming their words
    query = "renewal seats quotes backslashes cafe brien upgrade email pricing"
    rows = candidates(container, "S-COUNT", query, per_signal=per_signal)
    with psycopg.connect(database_url, autocommit=True) as owner:
        stored = dict(
            owner.execute(
                "SELECT id, content_tsv::text FROM memory_records WHERE subject_id = 'S-COUNT'"
            ).fetchall()
        )
    # Then each row's occurrences of the query's lexemes and its length are the full parse's
    assert per_signal == 2 or tricky <= {r.facts.id for r in rows}
    for r in rows:
        tokens = reference_tokens(stored[r.facts.id])
        assert r.length == len(tokens), stored[r.facts.id]
        assert r.term_counts == {w: tokens.count(w) for w in r.query_lexemes or [] if w in tokens}
    assert any(r.term_counts.get("seat", 0) > 200 for r in rows)  # the capped entry, as stored


def test_given_the_kept_cursor_when_read_again_and_through_a_wrapped_connection_then_the_rows_are_alike(
    container, subject
):
    # Given the candidates read twice on one connection (the second time on the kept cursor)
    from agent_memory.adapters.postgres.retrieval import RetrievalQueries

    vector = container.embedder.embed(["invoice exports for EMEA"])[0]
    query = dict(
        subject_id=subject,
        query_embedding=vector,
        query_text="invoice exports for EMEA",
        types=None,
        max_sensitivity_rank=2,
        now=datetime.now(UTC),
        per_signal=50,
    )

    class Wrapped:  # a connection wrapper as the benchmarks use one: rows decoded as read
        def __init__(self, conn):
            self._conn = conn

        def __getattr__(self, name):
            return getattr(self._conn, name)

    with container.db.statements() as conn:
        reader = RetrievalQueries()
        reader.conn, reader.tenant_id = conn, TENANT
        first = reader.retrieval_candidates(**query)
        again = reader.retrieval_candidates(**query)
        reader.conn = Wrapped(conn)
        wrapped = reader.retrieval_candidates(**query)
    # (the stored vectors, as the connection's own loader reads them)
    with container.db.tenant_transaction(TENANT) as tconn:
        stored = tconn.execute(
            "SELECT id, embedding FROM memory_records WHERE tenant_id = %s AND subject_id = %s",
            (TENANT, subject),
            binary=True,
        ).fetchall()
    # Then each read gives the same rows, lexemes and vectors, the vectors as the connection's loader reads them
    assert len(first) >= len(TOPICS)  # (other tests here add to the subject)
    for rows in (again, wrapped):
        assert [r.facts for r in rows] == [r.facts for r in first]
        assert [r.query_lexemes for r in rows] == [r.query_lexemes for r in first]
        assert all(np.array_equal(a.embedding, b.embedding) for a, b in zip(rows, first, strict=True))
    by_id = {r["id"]: r["embedding"] for r in stored}
    assert all(
        r.embedding.dtype == np.float32 and np.array_equal(r.embedding, by_id[r.facts.id]) for r in first
    )
    assert first[0].query_lexemes and "export" in first[0].query_lexemes
