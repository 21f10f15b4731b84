"""The composition root: the one place that chooses adapters and wires services.

Built lazily on first use (nothing connects at import time) and overridable in
tests with `set_container`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_memory.adapters.postgres.database import Database, migrate
from agent_memory.adapters.postgres.store import PostgresStore
from agent_memory.config import Settings
from agent_memory.domain.errors import ConfigurationError
from agent_memory.domain.screening import use_classifier
from agent_memory.observability import logger
from agent_memory.ports.deletion_registry import DeletionRegistry
from agent_memory.ports.embedder import Embedder
from agent_memory.ports.extractor import Extractor
from agent_memory.ports.messaging import ObjectStore, Queue
from agent_memory.ports.system_of_record import SystemOfRecord
from agent_memory.request_scope import set_request_gate
from agent_memory.services.access_log import AccessLogSealer
from agent_memory.services.commitments import CommitmentService
from agent_memory.services.deletion_replay import DeletionReplay, ReplayReport
from agent_memory.services.erasure import ErasureService, LocalErasureRunner
from agent_memory.services.export import ExportService
from agent_memory.services.extraction import ExtractionWorker
from agent_memory.services.forget import ForgetService
from agent_memory.services.lifecycle import LifecycleService
from agent_memory.services.notes import NoteService
from agent_memory.services.outbox import OutboxRelay
from agent_memory.services.policies import PolicyAdmin, PolicyRegistry
from agent_memory.services.quotas import Quotas
from agent_memory.services.reads import ReadService
from agent_memory.services.retrieval import RetrievalBroker
from agent_memory.services.review import ReviewService
from agent_memory.services.sessions import SessionService
from agent_memory.services.working import WorkingMemoryService
from agent_memory.services.write_gateway import WriteGateway


@dataclass
class Container:
    settings: Settings
    db: Database
    store: PostgresStore
    embedder: Embedder
    policies: PolicyRegistry
    policy_admin: PolicyAdmin
    quotas: Quotas
    gateway: WriteGateway
    review: ReviewService
    commitments: CommitmentService
    reads: ReadService
    system_of_record: SystemOfRecord
    broker: RetrievalBroker
    access_log: AccessLogSealer
    queue: Queue | None
    objects: ObjectStore | None
    outbox: OutboxRelay
    sessions: SessionService
    extraction: ExtractionWorker
    erasure: ErasureService
    lifecycle: LifecycleService
    forget: ForgetService
    export: ExportService
    working: WorkingMemoryService
    notes: NoteService
    deletion_registry: DeletionRegistry | None = None

    on_close: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for hook in self.on_close:  # background work that still needs the database
            hook()
        self.db.close()


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "openai":
        from agent_memory.adapters.embedders.openai_embedder import OpenAIEmbedder

        api_key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        if api_key is None and settings.openai_api_key_secret_arn:
            from aws_lambda_powertools.utilities import parameters

            api_key = str(parameters.get_secret(settings.openai_api_key_secret_arn, max_age=300))
        return OpenAIEmbedder(
            model=settings.openai_embedding_model,
            dimensions=settings.embedding_dim,
            api_key=api_key,
            base_url=settings.openai_base_url,
            timeout_s=settings.openai_timeout_s,
        )
    from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder

    return MiniLMOnnxEmbedder(threads=settings.embedder_threads)


def build_extractor(settings: Settings, embedder: Embedder | None = None) -> Extractor:
    if settings.extractor == "learned":
        from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder
        from agent_memory.adapters.extractors.learned import LearnedExtractor

        # The head was trained on MiniLM vectors: reuse the service's embedder when it is MiniLM.
        sentence_embedder = (
            embedder
            if embedder is not None and embedder.name == MiniLMOnnxEmbedder.name
            else MiniLMOnnxEmbedder(threads=settings.embedder_threads)
        )
        return LearnedExtractor(sentence_embedder, min_confidence=settings.extractor_min_confidence)
    if settings.extractor == "llm":
        from agent_memory.adapters.extractors.llm import LlmExtractor

        return LlmExtractor(
            model=settings.llm_model,
            api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
            base_url=settings.llm_base_url,
            timeout_s=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
        )
    from agent_memory.adapters.extractors.rules import RulesExtractor

    return RulesExtractor()


def build_messaging(settings: Settings) -> tuple[Queue | None, ObjectStore | None]:
    from agent_memory.adapters.aws import S3ObjectStore, SqsQueue

    queue = (
        SqsQueue(
            settings.extraction_queue_url, endpoint_url=settings.aws_endpoint_url, region=settings.aws_region
        )
        if settings.extraction_queue_url
        else None
    )
    objects = (
        S3ObjectStore(
            settings.transcripts_bucket, endpoint_url=settings.aws_endpoint_url, region=settings.aws_region
        )
        if settings.transcripts_bucket
        else None
    )
    return queue, objects


def build_deletion_registry(settings: Settings) -> DeletionRegistry | None:
    """The registry of erasures and deletions a restore replays: the S3 bucket when configured,
    else (locally) a file in the data folder. None in AWS without a bucket (logged)."""
    from agent_memory.adapters.deletion_registry import (
        REGISTRY_FILE,
        FileDeletionRegistry,
        S3DeletionRegistry,
        local_registry_key,
    )

    if settings.deletion_registry_bucket:
        from agent_memory.adapters.aws import client

        if settings.deletion_registry_key_secret_arn:
            from aws_lambda_powertools.utilities import parameters

            key = str(parameters.get_secret(settings.deletion_registry_key_secret_arn, max_age=3600)).encode()
        else:
            key = local_registry_key(settings.resolved_data_dir)
        return S3DeletionRegistry(
            settings.deletion_registry_bucket,
            key,
            client("s3", settings.aws_endpoint_url, settings.aws_region),
        )
    if settings.environment == "local":
        folder = settings.resolved_data_dir
        return FileDeletionRegistry(folder / REGISTRY_FILE, lambda: local_registry_key(folder))
    logger.warning("no deletion registry configured: a restore cannot replay erasures")
    return None


def replay_deletions(container: Container) -> ReplayReport | None:
    """Replay the deletion registry into the database (before the service answers); None without one."""
    if container.deletion_registry is None:
        return None
    return DeletionReplay(
        container.store, container.deletion_registry, container.erasure, container.forget
    ).replay()


def build_system_of_record(settings: Settings, db: Database) -> SystemOfRecord:
    if settings.sor_url:
        from agent_memory.adapters.sor.breaker import Breaker
        from agent_memory.adapters.sor.http import HttpSystemOfRecord

        return HttpSystemOfRecord(
            settings.sor_url,
            timeout_s=settings.sor_timeout_s,
            cache_seconds=settings.sor_cache_seconds,
            token=settings.sor_token.get_secret_value() if settings.sor_token else None,
            breaker=Breaker(settings.sor_breaker_failures, settings.sor_breaker_cooldown_s),
        )
    from agent_memory.adapters.sor.local import LocalSystemOfRecord

    return LocalSystemOfRecord(db, ttl_seconds=min(settings.sor_cache_seconds, 5.0))


def secret_database_url(settings: Settings) -> str:
    """A connection string from the (rotated) database secret, read through Powertools' cache."""
    from aws_lambda_powertools.utilities import parameters
    from psycopg.conninfo import make_conninfo

    secret: Any = parameters.get_secret(settings.database_secret_arn or "", transform="json", max_age=300)
    return make_conninfo(
        host=settings.database_host or secret["host"],
        port=str(settings.database_port),
        dbname=settings.database_name or secret.get("dbname", "postgres"),
        user=secret["username"],
        password=secret["password"],
        sslmode=settings.database_sslmode,
    )


def database_url(settings: Settings) -> str:
    if settings.database_secret_arn:
        return secret_database_url(settings)
    if settings.database_url:
        return settings.database_url
    try:
        from agent_memory.local.embedded import start_embedded_postgres
    except ModuleNotFoundError as exc:  # the Lambda layer ships no local/ (infra/layer.py)
        if exc.name is None or not exc.name.startswith("agent_memory.local"):
            raise
        raise ConfigurationError(
            "no DATABASE_URL and the embedded PostgreSQL is not installed (`uv sync --extra local`)"
        ) from exc
    return start_embedded_postgres(settings.resolved_data_dir)


def build_container(
    settings: Settings | None = None,
    *,
    embedder: Embedder | None = None,
    extractor: Extractor | None = None,
    run_migrations: bool = True,
) -> Container:
    """Every adapter chosen from `settings` (or the ones given) and every service wired to them."""
    settings = settings or Settings()
    use_classifier(settings.screening_classifier)
    embedder = embedder or build_embedder(settings)
    if embedder.dimension != settings.embedding_dim:
        settings = settings.model_copy(update={"embedding_dim": embedder.dimension})
    db = open_database(settings, embedding_model=embedder.name, run_migrations=run_migrations)
    container = build_services(settings, db, embedder, extractor)
    from agent_memory.domain.tokens import count_tokens

    count_tokens("warm up")  # load the tokenizer vocabularies now, not on the first request
    logger.info("container built", extra={"embedder": embedder.name, "embedding_dim": settings.embedding_dim})
    return container


def open_database(settings: Settings, *, embedding_model: str, run_migrations: bool = True) -> Database:
    """The pool, opened after the migrations (when asked for) and checked against the embedding dimension."""
    url = database_url(settings)
    if run_migrations and settings.migrate_on_start:
        migrate(url, embedding_dim=settings.embedding_dim, embedding_model=embedding_model)
    # With a rotated secret the pool asks for a fresh connection string on every new connection.
    conninfo: Any = (lambda: secret_database_url(settings)) if settings.database_secret_arn else url
    db = Database(
        conninfo,
        app_role=settings.app_role,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        prepared_statements=settings.database_prepared_statements,
        pool_timeout_s=settings.database_pool_timeout_s,
        connect_timeout_s=settings.database_connect_timeout_s,
        statement_timeout_s=settings.database_statement_timeout_s,
        lock_timeout_s=settings.database_lock_timeout_s,
        request_timeout_s=settings.database_request_timeout_s,
    )
    db.open()
    _check_dimension(db, settings.embedding_dim)
    return db


def build_services(
    settings: Settings, db: Database, embedder: Embedder, extractor: Extractor | None = None
) -> Container:
    """The services over the store on `db`, the system of record and the messaging adapters."""
    store = PostgresStore(db)
    policies = PolicyRegistry(store, settings.default_policy)
    sor = build_system_of_record(settings, db)
    queue, objects = build_messaging(settings)
    quotas = Quotas(store, policies)
    registry = build_deletion_registry(settings)
    gateway = WriteGateway(store, embedder, policies, quotas=quotas)
    outbox = build_outbox(settings, store, queue)
    extraction = ExtractionWorker(
        store,
        objects,
        extractor or (lambda: build_extractor(settings, embedder)),
        gateway,
        max_receive_count=settings.max_receive_count,
        system_of_record=sor,
    )
    container = Container(
        settings=settings,
        db=db,
        store=store,
        embedder=embedder,
        policies=policies,
        policy_admin=PolicyAdmin(policies),
        quotas=quotas,
        gateway=gateway,
        review=ReviewService(store, policies),
        commitments=CommitmentService(store, policies),
        reads=ReadService(store, policies),
        system_of_record=sor,
        broker=RetrievalBroker(store, embedder, policies, sor),
        access_log=AccessLogSealer(store),
        queue=queue,
        objects=objects,
        outbox=outbox,
        sessions=SessionService(store, outbox, objects),
        extraction=extraction,
        erasure=ErasureService(
            store, objects, invalidate_caches=_sor_cache_invalidator(sor), registry=registry
        ),
        lifecycle=build_lifecycle(settings, store, policies, objects, embedder, sor, gateway),
        working=WorkingMemoryService(store, policies),
        forget=ForgetService(store, registry=registry),
        export=ExportService(store, policies),
        # Notes are read by the session extractor itself (built once, on first use by either).
        notes=NoteService(gateway, lambda: extraction.extractor, sor),
        deletion_registry=registry,
    )
    _connect_services(container)
    return container


def build_outbox(settings: Settings, store: PostgresStore, queue: Queue | None) -> OutboxRelay:
    return OutboxRelay(
        store,
        queue,
        relay_after_s=settings.outbox_relay_after_s,
        stuck_after_s=settings.extraction_stuck_after_s,
        retention_s=settings.outbox_retention_s,
        # One more full round of deliveries after the first, then the session is failed.
        max_attempts=2 * settings.max_receive_count,
    )


def build_lifecycle(
    settings: Settings,
    store: PostgresStore,
    policies: PolicyRegistry,
    objects: ObjectStore | None,
    embedder: Embedder,
    sor: SystemOfRecord,
    gateway: WriteGateway | None = None,
) -> LifecycleService:
    return LifecycleService(
        store,
        policies,
        objects,
        transcript_ttl_days=settings.transcript_ttl_days,
        embedder=embedder,
        pause_ratio=settings.purge_pause_ratio,
        system_of_record=sor,
        gateway=gateway,
    )


def _connect_services(container: Container) -> None:
    """What services call on each other (sealing the access log, starting an erasure) and what
    must stop before the pool closes."""
    container.lifecycle.seal_access_log = container.access_log.seal_tenant
    container.lifecycle.hold_released = container.erasure.complete_after_release
    container.erasure.start_workflow = _workflow_starter(
        container.settings, container.erasure, container.on_close
    )
    close_sor = getattr(container.system_of_record, "close", None)  # the HTTP adapter's worker threads
    if close_sor is not None:
        container.on_close.append(close_sor)


def _sor_cache_invalidator(sor: SystemOfRecord) -> Any:
    def invalidate(tenant_id: str, subject_id: str) -> int:
        cache = getattr(sor, "cache", None)
        return (
            cache.invalidate(
                lambda k: k[1] == tenant_id and (k[2] == subject_id or k[2].startswith(subject_id + "\x00"))
            )
            if cache is not None
            else 0
        )

    return invalidate


def _workflow_starter(settings: Settings, erasure: ErasureService, on_close: list[Callable[[], None]]) -> Any:
    """Step Functions in AWS; locally the same steps and retries in a background thread."""
    if settings.erasure_state_machine_arn:
        import json

        from agent_memory.adapters.aws import client

        sfn = client("stepfunctions", settings.aws_endpoint_url, settings.aws_region)

        def start(job: dict[str, str]) -> None:
            sfn.start_execution(
                stateMachineArn=settings.erasure_state_machine_arn,
                name=job["erasure_id"],
                input=json.dumps(job),
            )

        return start
    runner = LocalErasureRunner(erasure)
    on_close.append(runner.wait)
    return runner.start_in_background


def _check_dimension(db: Database, configured: int) -> None:
    from agent_memory.adapters.postgres.database import check_embedding_dimension, stored_embedding_dimension

    with db.transaction() as conn:
        stored = stored_embedding_dimension(conn)
    if stored is not None:
        check_embedding_dimension(stored, configured)


_container: Container | None = None
_lock = threading.Lock()


def get_container() -> Container:
    global _container
    if _container is None:
        with _lock:
            if _container is None:
                _container = build_container()
    return _container


def _admit_request(tenant_id: str) -> None:
    """The serving container's requests-per-second quota (none before a container serves)."""
    if _container is not None:
        _container.quotas.admit_request(tenant_id)


set_request_gate(_admit_request)


def set_container(container: Container | None) -> None:
    """Tests and the local server install their own container."""
    global _container
    _container = container
