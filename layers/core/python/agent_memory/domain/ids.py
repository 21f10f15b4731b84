"""The one rule for ids a caller names: subject ids, session ids, working-memory keys and the ids
of memories and erasures in a path.

1-256 characters from ASCII letters, digits and `._:@+-`, starting with a letter or digit. So an
id can never smuggle a line break into a rendered context, a path segment (`/`, `..`) into an
object key, a NUL into the database, or a look-alike character into a comparison. Paths are
percent-decoded exactly once before the rule is applied (API Gateway does it; so does the local
server): `jane.doe%40example.com` is `jane.doe@example.com`, and `%252F` stays `%2F`, refused.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

ID_MAX_LENGTH = 256
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@+\-]*$"
ID_RULE = f"1-{ID_MAX_LENGTH} letters, digits or '._:@+-', starting with a letter or digit"
_ID = re.compile(ID_PATTERN)

SubjectId = Annotated[str, Field(min_length=1, max_length=ID_MAX_LENGTH, pattern=ID_PATTERN)]
SessionId = SubjectId


def valid_id(value: str) -> bool:
    return 0 < len(value) <= ID_MAX_LENGTH and _ID.fullmatch(value) is not None
