"""The HTTP API's request and response models, one module per area of routes.

A handler in functions/ takes its request model and returns its response model from here, so
the OpenAPI document (`agent_memory.api.openapi`) shows each route's real shape. A request model
that is also a service's input (`MemoryWrite`, `RetrieveRequest`, ...) is defined beside that
service, since services do not import the HTTP layer; its area module here names it for the route.

Response models refuse fields they do not declare: a service answering with a field its model
lacks fails its tests (a 500), rather than publishing a shape the document does not show.
A field a route sends only in some answers is declared with `omitted_when_absent`: it is left
out of the JSON when unset, exactly as the route answered before it had a model.
"""
