"""The VPC: public subnets for NAT, private subnets for the functions, isolated
subnets for the database; flow logs; the security group the functions share."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs

from constructs import Construct
from infra.config import DeploymentConfig

# What a VPC-attached Lambda needs to manage its network interfaces (AWS documents Resource "*":
# ec2:DescribeNetworkInterfaces has no resource-level permissions). Replaces the managed
# AWSLambdaVPCAccessExecutionRole, which would also allow writing to any log group.
VPC_ENI_ACTIONS = (
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
)


def vpc_access_statement() -> iam.PolicyStatement:
    return iam.PolicyStatement(actions=list(VPC_ENI_ACTIONS), resources=["*"])


class Network(Construct):
    """Exposes `vpc`, `function_subnets`, `database_subnets` and `functions_security_group`."""

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        has_egress = config.nat_gateways > 0
        subnets = [
            ec2.SubnetConfiguration(
                name="database", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=24
            )
        ]
        if has_egress:
            subnets = [
                ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=24),
                ec2.SubnetConfiguration(
                    name="functions", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS, cidr_mask=22
                ),
                *subnets,
            ]
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr("10.40.0.0/16"),
            max_azs=config.max_azs,
            nat_gateways=config.nat_gateways,
            subnet_configuration=subnets,
            restrict_default_security_group=False,
        )
        flow_log_group = logs.LogGroup(
            self,
            "FlowLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.vpc.add_flow_log(
            "FlowLog",
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_log_group),
            traffic_type=ec2.FlowLogTrafficType.REJECT,
        )
        # S3 through a gateway endpoint: free, and transcripts never cross the NAT.
        self.vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)

        self.database_subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        if has_egress:
            self.function_subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        else:
            # No NAT: the functions live in the isolated subnets and reach AWS APIs through
            # interface endpoints (an OpenAI-compatible endpoint must then be reachable privately).
            self.function_subnets = self.database_subnets
            for name, service in (
                ("SecretsManager", ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER),
                ("Sqs", ec2.InterfaceVpcEndpointAwsService.SQS),
                ("StepFunctions", ec2.InterfaceVpcEndpointAwsService.STEP_FUNCTIONS),
            ):
                self.vpc.add_interface_endpoint(name, service=service, subnets=self.database_subnets)

        self.functions_security_group = ec2.SecurityGroup(
            self,
            "FunctionsSecurityGroup",
            vpc=self.vpc,
            description="Lambda functions of the memory service (egress only)",
            allow_all_outbound=True,
        )
