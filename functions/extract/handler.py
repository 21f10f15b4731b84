"""Extraction worker: an SQS batch of closed sessions, partial batch failures per message."""

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_container
from agent_memory.observability import logger, metrics, tracer

processor = BatchProcessor(event_type=EventType.SQS)


def record_handler(record: SQSRecord) -> dict[str, Any]:
    receive_count = int(record.attributes.approximate_receive_count or 1)
    return get_container().extraction.process(json.loads(record.body), receive_count=receive_count)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
