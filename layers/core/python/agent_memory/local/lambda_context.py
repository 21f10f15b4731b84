"""A stand-in for the Lambda context object, as `sam local invoke` provides one."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass
class LocalLambdaContext:
    function_name: str = "local"
    memory_limit_in_mb: int = 512
    function_version: str = "$LATEST"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/aws/lambda/local"
    log_stream_name: str = "local"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:000000000000:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000
