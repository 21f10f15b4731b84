"""The review console: static pages (plain ES modules, HTML and CSS) that call only the public
/v1 API with the signed-in user's token. `memory serve` serves them at /console/; the CDK stack
deploys the same files (infra/constructs/console.py)."""
