"""Custom-resource handler: applies the core package's migrations to Aurora.

Runs on Create and Update (the resource's properties carry a fingerprint of the
migration files and the embedding settings); Delete leaves the data alone.
The owner credentials come from the cluster's secret at run time, never from
the template.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
from psycopg.conninfo import make_conninfo

from agent_memory.adapters.postgres.database import grant_app_login, migrate
from agent_memory.config import Settings
from agent_memory.observability import logger

PHYSICAL_ID = "agent-memory-migrations"


def read_secret(secret_arn: str) -> dict[str, Any]:
    raw = boto3.client("secretsmanager").get_secret_value(SecretId=secret_arn)["SecretString"]
    secret: dict[str, Any] = json.loads(raw)
    return secret


def owner_url(secret_arn: str, *, host: str | None = None, dbname: str | None = None) -> str:
    """A libpq connection string for the owner, built from the RDS secret (TLS required)."""
    secret = read_secret(secret_arn)
    return make_conninfo(
        host=host or secret["host"],
        port=str(secret.get("port", 5432)),
        dbname=dbname or secret.get("dbname", "postgres"),
        user=secret["username"],
        password=secret["password"],
        sslmode="require",
        connect_timeout="30",  # a paused Serverless v2 writer takes a while to resume
    )


@logger.inject_lambda_context(clear_state=True)
def on_event(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = event["RequestType"]
    if request == "Delete":
        return {"PhysicalResourceId": event.get("PhysicalResourceId", PHYSICAL_ID)}
    props = event["ResourceProperties"]
    url = owner_url(props["SecretArn"], host=props.get("Host"), dbname=props.get("DatabaseName"))
    applied = migrate(url, embedding_dim=int(props["EmbeddingDim"]), embedding_model=props["EmbeddingModel"])
    if props.get("AppSecretArn"):  # the functions' login: the application role itself
        app = read_secret(props["AppSecretArn"])
        settings = Settings()  # the functions' timeouts (MEMORY_DATABASE_*), their logins' defaults
        grant_app_login(
            url,
            app["password"],
            app_role=app["username"],
            statement_timeout_s=settings.database_statement_timeout_s,
            lock_timeout_s=settings.database_lock_timeout_s,
        )
    logger.info("migrations done", extra={"applied": applied, "request": request})
    return {"PhysicalResourceId": PHYSICAL_ID, "Data": {"Applied": ",".join(applied) or "none"}}
