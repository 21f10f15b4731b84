"""How a construct acknowledges a cdk-nag finding, with its reason (`infra/nag.py` holds the
stack's; a construct may acknowledge its own, as the console does). cdk-nag v3 takes
acknowledgments through CDK's `Validations.of(scope).acknowledge`."""

from __future__ import annotations

from aws_cdk import Acknowledgment, CfnElement, Stack, Validations

from constructs import IConstruct


def ack(scope: IConstruct, rule: str, reason: str, finding: str | None = None) -> None:
    """Acknowledge rule `rule` (`IAM5`; `finding` narrows it to one finding) on `scope` and below."""
    rule_id = f"AwsSolutions-{rule}" + (f"[{finding}]" if finding else "")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule_id, reason=reason))


def logical_id(stack: Stack, construct: IConstruct) -> str:
    """The logical id of a construct's CloudFormation resource, as cdk-nag names it in a finding."""
    element = construct.node.default_child if not isinstance(construct, CfnElement) else construct
    assert isinstance(element, CfnElement)
    return stack.get_logical_id(element)
