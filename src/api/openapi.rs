//! `GET /api/openapi.json`: the API's OpenAPI 3.1 description, built from the code. Each server
//! function's request is its own argument struct and its answer its own return type (both
//! derive their JSON Schema beside their serde), so the description cannot drift from what the
//! server reads and writes; the other routes come from the router's one table
//! ([`crate::server::http::routes`]). What is written here by hand is what types cannot say:
//! who may call each operation and which refusals it can answer.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use leptos::server_fn::ServerFn;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::{
    HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{
    ComponentsBuilder, InfoBuilder, OpenApi, OpenApiBuilder, PathsBuilder, Ref, RefOr, Required,
};
use utoipa::{PartialSchema, ToSchema};

use super::error::ApiError;
use crate::server::http::routes::Route;

/// Who may call an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    /// Anyone: answers the same whoever asks, or says who is asking.
    Anyone,
    /// A signed-in caller (a session cookie or an API token); `401 sign_in_required` otherwise.
    SignedIn,
    /// An administrator; `403 admin_only` for anyone else signed in.
    Admin,
}

/// The refusals every JSON operation can answer whatever it does: a body that does not read
/// (400), a page of another site (403 `cross_origin`), a body over the limit (413), a type that
/// is not JSON (415), an unknown host name with `PONDER_AUTH=none` (421), and a database that is
/// down or a server shutting down (503).
const EVERY_REFUSAL: [u16; 6] = [400, 403, 413, 415, 421, 503];

/// One operation as the description says it, before it is written out.
struct Operation {
    path: String,
    method: HttpMethod,
    id: String,
    tag: String,
    description: Option<String>,
    access: Access,
    refusals: Vec<u16>,
    request: Option<(&'static str, RefOr<Schema>)>,
    query: Vec<(String, RefOr<Schema>, bool)>,
    success: (u16, Option<(&'static str, RefOr<Schema>)>),
    links: Vec<(&'static str, &'static str, &'static str)>,
}

/// The description, collected: operations and the schemas they refer to.
#[derive(Default)]
struct Document {
    operations: Vec<Operation>,
    schemas: Vec<(String, RefOr<Schema>)>,
}

impl Document {
    /// A server function: its path, method, request and answer from its own types.
    fn function<T>(&mut self, access: Access, refusals: &[u16]) -> &mut Operation
    where
        T: ServerFn + ToSchema,
        T::Output: ToSchema,
    {
        self.function_reading::<T>(None, access, refusals)
    }

    /// A server function whose body is `body` itself, not an object of its arguments (`chat`
    /// reads the [`crate::domain::ChatRequest`] it takes as the whole body).
    fn function_reading<T>(
        &mut self,
        body: Option<RefOr<Schema>>,
        access: Access,
        refusals: &[u16],
    ) -> &mut Operation
    where
        T: ServerFn + ToSchema,
        T::Output: ToSchema,
    {
        let method = function_method(T::PATH);
        let mut request = T::schema();
        let description = take_description(&mut request);
        T::schemas(&mut self.schemas);
        let name = T::name().to_string();
        let (request, query) = if let Some(body) = body {
            (Some((JSON, body)), Vec::new())
        } else if method == HttpMethod::Get {
            (None, query_parameters(&request))
        } else {
            self.schemas.push((format!("{name}Request"), request));
            let reference = Ref::from_schema_name(format!("{name}Request"));
            (Some((JSON, RefOr::Ref(reference))), Vec::new())
        };
        self.operations.push(Operation {
            path: T::PATH.to_string(),
            method,
            id: lower_camel(&name),
            tag: tag_of(T::PATH),
            description,
            access,
            refusals: refusals.to_vec(),
            request,
            query,
            success: (200, Some((JSON, answer::<T::Output>(&mut self.schemas)))),
            links: Vec::new(),
        });
        self.last()
    }

    /// A route of the router's table.
    fn route(&mut self, route: Route, access: Access, refusals: &[u16]) -> &mut Operation {
        let path = route.path();
        self.operations.push(Operation {
            id: lower_camel(&format!("{route:?}")),
            tag: tag_of(&path),
            path,
            method: if route.method() == http::Method::POST {
                HttpMethod::Post
            } else {
                HttpMethod::Get
            },
            description: None,
            access,
            refusals: refusals.to_vec(),
            request: None,
            query: Vec::new(),
            success: (200, None),
            links: Vec::new(),
        });
        self.last()
    }

    fn last(&mut self) -> &mut Operation {
        let last = self.operations.len() - 1;
        &mut self.operations[last]
    }

    fn schema<T: ToSchema>(&mut self) -> RefOr<Schema> {
        T::schemas(&mut self.schemas);
        self.schemas.push((T::name().to_string(), T::schema()));
        RefOr::Ref(Ref::from_schema_name(T::name()))
    }
}

impl Operation {
    fn says(&mut self, description: &str) -> &mut Self {
        self.description = Some(description.to_string());
        self
    }

    fn answers(&mut self, status: u16, body: Option<(&'static str, RefOr<Schema>)>) -> &mut Self {
        self.success = (status, body);
        self
    }

    fn body(&mut self, media: &'static str, schema: RefOr<Schema>) -> &mut Self {
        self.request = Some((media, schema));
        self
    }

    fn query(&mut self, name: &str, schema: RefOr<Schema>, required: bool) -> &mut Self {
        self.query.push((name.to_string(), schema, required));
        self
    }

    /// A link for the stateful checks: `operation`'s `field` (its JSON body's) is this
    /// answer's `from` (a JSON pointer into it).
    fn link(
        &mut self,
        operation: &'static str,
        field: &'static str,
        from: &'static str,
    ) -> &mut Self {
        self.links.push((operation, field, from));
        self
    }
}

const JSON: &str = "application/json";
const EVENTS: &str = "text/event-stream";
const HTML: &str = "text/html";
const TEXT: &str = "text/plain";
const BYTES: &str = "application/octet-stream";
const ANY: &str = "*/*";
const OPEN_METRICS: &str = "application/openmetrics-text";

/// The description as served, built once.
pub fn json() -> &'static str {
    static JSON_TEXT: OnceLock<String> = OnceLock::new();
    JSON_TEXT.get_or_init(|| {
        let mut value = serde_json::to_value(description()).unwrap_or_default();
        name_each_event(&mut value);
        link_keys_in_camel_case(&mut value);
        plain_descriptions(&mut value);
        pairs_in_lists(&mut value);
        serde_json::to_string_pretty(&value).unwrap_or_default()
    })
}

/// Gives each kind of turn event a schema of its own (`EventThinkingStart`, …), which
/// `TurnEvent` picks from by its `type`: a client validates or generates one event type alone.
fn name_each_event(doc: &mut serde_json::Value) {
    use serde_json::{json, Value};
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(Value::Array(kinds)) = schemas
        .get_mut("TurnEvent")
        .and_then(|e| e.get_mut("oneOf"))
        .map(Value::take)
    else {
        return;
    };
    let mut one_of = Vec::new();
    let mut mapping = serde_json::Map::new();
    for kind in kinds {
        let tag = event_tag(&kind).unwrap_or_default();
        let name = format!("Event{}", pascal(&tag));
        let reference = format!("#/components/schemas/{name}");
        one_of.push(json!({ "$ref": reference }));
        mapping.insert(tag, Value::String(reference));
        schemas.insert(name, kind);
    }
    schemas.insert(
        "TurnEvent".into(),
        json!({
            "description": "One event of a turn: each `data:` line of the stream. Every turn ends with exactly one `done` or `error`, and nothing follows it.",
            "oneOf": one_of,
            "discriminator": { "propertyName": "type", "mapping": mapping },
        }),
    );
}

/// A link's fields as OpenAPI spells them (`operationId`, `requestBody`): utoipa 5.5 writes
/// them in snake case, which no tool reads.
fn link_keys_in_camel_case(doc: &mut serde_json::Value) {
    let Some(paths) = doc.get_mut("paths").and_then(|p| p.as_object_mut()) else {
        return;
    };
    let responses = paths
        .values_mut()
        .filter_map(|item| item.as_object_mut())
        .flat_map(|item| item.values_mut())
        .filter_map(|op| op.get_mut("responses").and_then(|r| r.as_object_mut()))
        .flat_map(|responses| responses.values_mut());
    for response in responses {
        let Some(links) = response.get_mut("links").and_then(|l| l.as_object_mut()) else {
            continue;
        };
        for link in links.values_mut().filter_map(|l| l.as_object_mut()) {
            for (snake, camel) in [
                ("operation_id", "operationId"),
                ("operation_ref", "operationRef"),
                ("request_body", "requestBody"),
            ] {
                if let Some(v) = link.remove(snake) {
                    link.insert(camel.into(), v);
                }
            }
        }
    }
}

/// A list of tuples whose parts have one type (`usage/quotas`' `[name, limits]` pairs) as a
/// list of lists of that type, of the tuple's length: schemathesis cannot read `prefixItems`
/// nested in an array's `items`, and the two say the same of such a tuple.
fn pairs_in_lists(value: &mut serde_json::Value) {
    use serde_json::{json, Value};
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(items)) = map.get_mut("items") {
                let parts = items.get("prefixItems").and_then(Value::as_array).cloned();
                if let Some(parts) = parts.filter(|p| p.windows(2).all(|w| w[0] == w[1])) {
                    let n = parts.len();
                    let part = parts.into_iter().next().unwrap_or(Value::Bool(true));
                    items.remove("prefixItems");
                    items.insert("items".into(), part);
                    items.insert("minItems".into(), json!(n));
                    items.insert("maxItems".into(), json!(n));
                }
            }
            map.values_mut().for_each(pairs_in_lists);
        }
        Value::Array(list) => list.iter_mut().for_each(pairs_in_lists),
        _ => {}
    }
}

/// Descriptions come from doc comments, whose links to Rust items (``[`Failure`]``) mean
/// nothing to a reader of the API: they are left as the code words they name.
fn plain_descriptions(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(text) if key == "description" => *text = without_item_links(text),
                    _ => plain_descriptions(v),
                }
            }
        }
        Value::Array(list) => list.iter_mut().for_each(plain_descriptions),
        _ => {}
    }
}

/// ``[`x`]`` as `` `x` `` (a link with a target of its own, ``[`x`](…)``, stays).
fn without_item_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[`") {
        let after = &rest[start + 1..];
        let Some(end) = after.find("`]") else { break };
        let word = &after[..end + 1];
        let tail = &after[end + 2..];
        out.push_str(&rest[..start]);
        if tail.starts_with('(') || tail.starts_with('[') {
            out.push('[');
            out.push_str(word);
            out.push(']');
        } else {
            out.push_str(word);
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// The `type` an event kind's schema requires (in its own properties, or in one of `allOf`).
fn event_tag(schema: &serde_json::Value) -> Option<String> {
    if let Some(tag) = schema
        .pointer("/properties/type/enum/0")
        .and_then(|t| t.as_str())
    {
        return Some(tag.to_string());
    }
    schema.get("allOf")?.as_array()?.iter().find_map(event_tag)
}

fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The whole description.
pub fn description() -> OpenApi {
    let mut doc = Document::default();
    functions(&mut doc);
    routes(&mut doc);
    write(doc)
}

fn functions(doc: &mut Document) {
    use super::presets::*;
    use super::{account::*, chat::*, compare::*, history::*, instructions::*, models::*};
    use super::{rich::*, share::*, turn::*, usage::*};
    use Access::{Admin, Anyone, SignedIn};
    doc.function::<WhoAmI>(Anyone, &[]);
    doc.function::<SetUp>(Anyone, &[409, 429]);
    doc.function::<SignIn>(Anyone, &[401, 429]);
    doc.function::<SignOut>(Anyone, &[]);
    doc.function::<SignOutEverywhere>(SignedIn, &[]);
    doc.function::<ListUsers>(Admin, &[]);
    doc.function::<AddUser>(Admin, &[409]);
    doc.function::<RemoveUser>(Admin, &[404, 409]);
    doc.function::<ListTokens>(SignedIn, &[]);
    doc.function::<CreateToken>(SignedIn, &[409])
        .link("revokeToken", "id", "/token/id");
    doc.function::<RevokeToken>(SignedIn, &[404]);
    let events = doc.schema::<crate::domain::TurnEvent>();
    let body = doc.schema::<crate::domain::ChatRequest>();
    doc.function_reading::<Chat>(Some(body), SignedIn, &[404, 409, 429])
        .answers(200, Some((EVENTS, events.clone())));
    doc.function::<TurnEvents>(SignedIn, &[404])
        .answers(200, Some((EVENTS, events)));
    doc.function::<StopTurn>(SignedIn, &[404]);
    doc.function::<AnswerNow>(SignedIn, &[404]);
    doc.function::<ListWorkspaces>(SignedIn, &[]);
    doc.function::<CreateWorkspace>(SignedIn, &[409])
        .link("renameWorkspace", "id", "/id")
        .link("listConversations", "workspace", "/id");
    doc.function::<RenameWorkspace>(SignedIn, &[404, 409]);
    doc.function::<ListConversations>(SignedIn, &[404]);
    doc.function::<GetConversation>(SignedIn, &[404]);
    doc.function::<RenameConversation>(SignedIn, &[404]);
    doc.function::<PinConversation>(SignedIn, &[404]);
    doc.function::<TagConversation>(SignedIn, &[404]);
    doc.function::<MoveConversation>(SignedIn, &[404]);
    doc.function::<DeleteConversation>(SignedIn, &[404]);
    doc.function::<RestoreConversation>(SignedIn, &[404]);
    doc.function::<BlockText>(SignedIn, &[404]);
    doc.function::<SetBlockOpen>(SignedIn, &[404]);
    doc.function::<SetBlockOpenAt>(SignedIn, &[404]);
    doc.function::<BranchConversation>(SignedIn, &[404, 409])
        .link("getConversation", "id", "/id")
        .link("renameConversation", "id", "/id");
    doc.function::<ExportConversation>(SignedIn, &[404]);
    doc.function::<SetActiveVersion>(SignedIn, &[404, 409]);
    doc.function::<PickAnswer>(SignedIn, &[404, 409]);
    doc.function::<RateAnswer>(SignedIn, &[404]);
    doc.function::<CompareRecord>(SignedIn, &[]);
    doc.function::<ContinueAll>(SignedIn, &[404, 409])
        .link("getConversation", "id", "/0/id");
    doc.function::<Search>(SignedIn, &[]);
    doc.function::<ImportConversation>(SignedIn, &[404, 409]);
    doc.function::<GetPreferences>(SignedIn, &[404]);
    doc.function::<SetPreferences>(SignedIn, &[404, 409]);
    doc.function::<WaitForTitle>(SignedIn, &[404]);
    doc.function::<GetInstructions>(SignedIn, &[404]);
    doc.function::<SetInstructions>(SignedIn, &[403, 404, 409]);
    doc.function::<ListModels>(SignedIn, &[]);
    doc.function::<ListPresets>(SignedIn, &[]);
    doc.function::<SavePreset>(SignedIn, &[404, 409])
        .link("deletePreset", "id", "/id");
    doc.function::<DeletePreset>(SignedIn, &[404]);
    doc.function::<RenderMath>(SignedIn, &[]);
    doc.function::<RenderCode>(SignedIn, &[429]);
    doc.function::<CreateShare>(SignedIn, &[404, 409])
        .link("revokeShare", "id", "/id")
        .link("updateShare", "id", "/id");
    doc.function::<ListShares>(SignedIn, &[404]);
    doc.function::<UpdateShare>(SignedIn, &[404]);
    doc.function::<RevokeShare>(SignedIn, &[404]);
    doc.function::<AllShares>(Admin, &[]);
    doc.function::<RevokeAnyShare>(Admin, &[404]);
    doc.function::<MonthUsage>(SignedIn, &[]);
    doc.function::<QuotasInForce>(Admin, &[]);
    doc.function::<SetQuota>(Admin, &[404]);
}

fn routes(doc: &mut Document) {
    use Access::{Anyone, SignedIn};
    let string = || String::schema();
    for route in Route::ALL {
        match route {
            Route::Chat => {
                doc.route(route, Anyone, &[])
                    .says("The chat page (signed out: the sign-in page).")
                    .answers(200, Some((HTML, string())));
            }
            Route::Conversation => {
                doc.route(route, Anyone, &[404])
                    .says("A conversation's page, drawn with its last messages; `404` when it is not the caller's.")
                    .answers(200, Some((HTML, string())));
            }
            Route::SharedPage => {
                doc.route(route, Anyone, &[401, 404])
                    .says("A conversation shared by link, a page with no script; `404` for a link revoked or never made.")
                    .answers(200, Some((HTML, string())));
            }
            Route::SharedFile => {
                doc.route(route, Anyone, &[401, 404])
                    .says(
                        "The `n`th file a shared conversation shows, when its link includes files.",
                    )
                    .answers(200, Some((BYTES, binary())));
            }
            Route::ContinueShared => {
                doc.route(route, SignedIn, &[403, 404])
                    .says("Copies a shared conversation into the caller's history (a form of Ponder's own pages) and answers `303` to the copy.")
                    .answers(303, None);
            }
            Route::UploadAttachment => {
                let info = doc.schema::<crate::server::store::attachments::AttachmentInfo>();
                doc.route(route, SignedIn, &[400, 403, 409, 413, 415, 421, 503])
                    .says("Keeps the file sent as the body, its kind told from its bytes; `keep=0` only judges it (`200`, nothing kept).")
                    .query("name", string(), true)
                    .query("keep", string(), false)
                    .body(BYTES, binary())
                    .answers(201, Some((JSON, info)));
            }
            Route::DownloadAttachment => {
                doc.route(route, SignedIn, &[400, 404, 503])
                    .says("A kept file's bytes, to its owner only, as the type it was kept as.")
                    .answers(200, Some((ANY, binary())));
            }
            Route::UsageCsv => {
                doc.route(route, SignedIn, &[400, 403, 404, 503])
                    .says("The ledger's lines of a month as CSV, one per turn.")
                    .query("month", string(), false)
                    .query("everyone", string(), false)
                    .query("reader", string(), false)
                    .answers(200, Some(("text/csv", string())));
            }
            Route::Description => {
                doc.route(route, Anyone, &[])
                    .says("This description.")
                    .answers(200, Some((JSON, ObjectBuilder::new().into())));
            }
            Route::Health => {
                doc.route(route, Anyone, &[])
                    .says("Liveness: the process answers.")
                    .answers(200, Some((TEXT, string())));
            }
            Route::Ready => {
                doc.route(route, Anyone, &[503])
                    .says("Readiness: the database and the model server answer.")
                    .answers(200, Some((TEXT, string())));
            }
            Route::Metrics => {
                doc.route(route, Anyone, &[])
                    .says("Prometheus metrics, in the OpenMetrics text format.")
                    .answers(200, Some((OPEN_METRICS, string())));
            }
            Route::SsoLogin => {
                doc.route(route, Anyone, &[404, 503])
                    .says("Single sign-on (`PONDER_AUTH=oidc`): `303` to the identity provider, with `state`, `nonce` and a PKCE challenge; `return_to` is a path of this Ponder to come back to. `404` without single sign-on; a failure is a page (HTML) with its status.")
                    .query("return_to", string(), false)
                    .answers(303, None);
            }
            Route::SsoCallback => {
                doc.route(route, Anyone, &[400, 403, 404, 502, 503])
                    .says("Where the identity provider sends the browser back: the code is exchanged, the ID token verified, the person signed in (the session cookie) and sent on with `303`. A failure is a page (HTML): `400` a sign-in not started here or tampered with, `403` refused (groups, the provider), `502` an ID token that does not verify, `503` the provider unreachable.")
                    .query("code", string(), false)
                    .query("state", string(), false)
                    .query("error", string(), false)
                    .answers(303, None);
            }
        }
    }
}

fn write(doc: Document) -> OpenApi {
    let error = RefOr::Ref(Ref::from_schema_name("Error"));
    let mut schemas = doc.schemas;
    ApiError::schemas(&mut schemas);
    schemas.push(("Error".to_string(), ApiError::schema()));
    let mut tags = std::collections::BTreeSet::new();
    let mut paths = PathsBuilder::new();
    let mut items: BTreeMap<String, PathItem> = BTreeMap::new();
    for op in doc.operations {
        tags.insert(op.tag.clone());
        let mut builder = OperationBuilder::new()
            .operation_id(Some(op.id))
            .tag(op.tag)
            .summary(op.description.as_deref().map(first_sentence))
            .description(op.description);
        for (name, schema, required) in op.query {
            builder = builder.parameter(
                ParameterBuilder::new()
                    .name(name)
                    .parameter_in(ParameterIn::Query)
                    .required(if required {
                        Required::True
                    } else {
                        Required::False
                    })
                    .schema(Some(schema)),
            );
        }
        for (name, _) in path_parameters(&op.path) {
            builder = builder.parameter(
                ParameterBuilder::new()
                    .name(name)
                    .parameter_in(ParameterIn::Path)
                    .required(Required::True)
                    .schema(Some(String::schema())),
            );
        }
        if let Some((media, schema)) = op.request {
            builder = builder.request_body(Some(
                RequestBodyBuilder::new()
                    .required(Some(Required::True))
                    .content(media, ContentBuilder::new().schema(Some(schema)).build())
                    .build(),
            ));
        }
        let (status, body) = op.success;
        let mut success = ResponseBuilder::new().description(success_words(status));
        if let Some((media, schema)) = body {
            success = success.content(media, ContentBuilder::new().schema(Some(schema)).build());
        }
        for (target, field, from) in op.links {
            success = success.link(
                target,
                LinkBuilder::new()
                    .operation_id(target)
                    .request_body(Some(
                        serde_json::json!({ field: format!("$response.body#{from}") }),
                    ))
                    .build(),
            );
        }
        builder = builder.response(status.to_string(), success.build());
        let mut refusals = op.refusals;
        if op.method != HttpMethod::Get
            || op.path.starts_with("/api/") && op.path != Route::Description.path()
        {
            refusals.extend(EVERY_REFUSAL);
        }
        if op.access != Access::Anyone {
            refusals.push(401);
        }
        if op.access == Access::Admin {
            refusals.push(403);
        }
        refusals.sort_unstable();
        refusals.dedup();
        for code in refusals {
            let mut refusal = ResponseBuilder::new()
                .description(refusal_words(code))
                .content(
                    JSON,
                    ContentBuilder::new().schema(Some(error.clone())).build(),
                );
            if !op.path.starts_with("/api/") {
                for media in [HTML, TEXT] {
                    refusal = refusal.content(
                        media,
                        ContentBuilder::new().schema(Some(String::schema())).build(),
                    );
                }
            }
            builder = builder.response(code.to_string(), refusal.build());
        }
        builder = match op.access {
            Access::Anyone => builder.security(SecurityRequirement::default()),
            _ => builder
                .security(SecurityRequirement::new("bearer", Vec::<String>::new()))
                .security(SecurityRequirement::new("session", Vec::<String>::new())),
        };
        let item = PathItem::new(op.method, builder.build());
        match items.get_mut(&op.path) {
            Some(existing) => existing.merge_operations(item),
            None => {
                items.insert(op.path, item);
            }
        }
    }
    for (path, item) in items {
        paths = paths.path(path, item);
    }
    let mut components = ComponentsBuilder::new()
        .security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An API token made with `tokens/create` (or in the page's settings).",
                    ))
                    .build(),
            ),
        )
        .security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                crate::server::auth::SESSION_COOKIE,
                "The session a sign-in sets (`auth/sign-in`, or single sign-on's callback).",
            ))),
        );
    let (schemas, clashes) = unique(schemas);
    for name in clashes {
        tracing::error!(%name, "two schemas of the API's description have one name");
    }
    for (name, schema) in schemas {
        components = components.schema(name, schema);
    }
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Ponder")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "Ponder's HTTP API: the turn stream, history, accounts and the rest, as the page and the terminal client use it. Server functions are `POST` with a JSON body; a refusal's body is the stream's `error` event. Signing in is by an API token or the session cookie with `PONDER_AUTH=password` or `oidc` (single sign-on, `/auth/oidc/login`); with `PONDER_AUTH=header` a trusted proxy's header names the caller instead, and with `PONDER_AUTH=none` no operation asks.",
                ))
                .build(),
        )
        .paths(paths.build())
        .components(Some(components.build()))
        .tags(Some(tags.into_iter().map(|t| TagBuilder::new().name(t).build())))
        .build()
}

/// The schemas by name, each once, and the names two different schemas claimed (every
/// reference to such a name would be ambiguous; the tests require none).
fn unique(schemas: Vec<(String, RefOr<Schema>)>) -> (BTreeMap<String, RefOr<Schema>>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut clashes = Vec::new();
    for (name, schema) in schemas {
        match out.get(&name) {
            None => {
                out.insert(name, schema);
            }
            Some(kept) if *kept == schema => {}
            Some(_) => clashes.push(name),
        }
    }
    (out, clashes)
}

fn binary() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .content_media_type(BYTES)
        .into()
}

/// The HTTP method a registered server function answers to.
fn function_method(path: &str) -> HttpMethod {
    let get = leptos::server_fn::axum::server_fn_paths()
        .any(|(p, method)| p == path && method == http::Method::GET);
    if get {
        HttpMethod::Get
    } else {
        HttpMethod::Post
    }
}

/// An answer's schema: `()` is JSON `null`; anything else its own, its parts registered.
fn answer<T: ToSchema>(schemas: &mut Vec<(String, RefOr<Schema>)>) -> RefOr<Schema> {
    if T::name() == <() as ToSchema>::name() {
        return ObjectBuilder::new().schema_type(Type::Null).into();
    }
    T::schemas(schemas);
    T::schema()
}

/// Moves a schema's description out (an argument struct carries its function's doc comment,
/// after a line of the macro's own), its lines joined into paragraphs.
fn take_description(schema: &mut RefOr<Schema>) -> Option<String> {
    let RefOr::T(Schema::Object(object)) = schema else {
        return None;
    };
    let text = object.description.take()?;
    let mut out = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("Serialized arguments for the") {
            continue;
        }
        if line.is_empty() {
            out.push_str("\n\n");
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(line);
        }
    }
    let out = out.trim().to_string();
    (!out.is_empty()).then_some(out)
}

/// A `GET` function's arguments as query parameters.
fn query_parameters(schema: &RefOr<Schema>) -> Vec<(String, RefOr<Schema>, bool)> {
    match schema {
        RefOr::T(Schema::Object(object)) => object
            .properties
            .iter()
            .map(|(name, schema)| (name.clone(), schema.clone(), object.required.contains(name)))
            .collect(),
        _ => Vec::new(),
    }
}

fn path_parameters(path: &str) -> Vec<(String, ())> {
    path.split('/')
        .filter_map(|part| part.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| (name.to_string(), ()))
        .collect()
}

/// An operation's tag: the first word of its path after `/api/` (`conversations`), or its
/// first segment.
fn tag_of(path: &str) -> String {
    let rest = path
        .strip_prefix("/api/")
        .unwrap_or(path.trim_start_matches('/'));
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    match word.as_str() {
        "" | "c" | "s" => "pages".into(),
        "healthz" | "readyz" | "metrics" => "operations".into(),
        "me" | "auth" | "users" | "tokens" => "accounts".into(),
        "openapi" => "description".into(),
        _ => word,
    }
}

fn lower_camel(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

fn first_sentence(text: &str) -> String {
    let end = text.find(". ").map(|i| i + 1).unwrap_or(text.len());
    text[..end].replace('\n', " ")
}

fn success_words(status: u16) -> &'static str {
    match status {
        201 => "Created",
        303 => "See the next address (`Location`)",
        _ => "OK",
    }
}

fn refusal_words(status: u16) -> &'static str {
    match status {
        400 => "The request does not read (`bad_request`, or a more precise code)",
        401 => "Not signed in (`sign_in_required`), or the sign-in failed",
        403 => "Not allowed: `admin_only`, or `cross_origin` for another site's page",
        404 => "Not found, or not the caller's (the same body either way)",
        409 => "A conflict, or a limit of how many reached",
        413 => "The body is over the limit",
        415 => "The body is not of the type the operation reads",
        421 => "An unknown host name (`PONDER_AUTH=none`)",
        502 => "The identity provider's answer did not verify",
        429 => "Too many requests, or a limit reached; `Retry-After` says when to try again",
        503 => "The database is unavailable, or the server is shutting down",
        _ => "Refused",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> serde_json::Value {
        serde_json::from_str(json()).unwrap()
    }

    /// Every `$ref` of a value, with where it is.
    fn references(value: &serde_json::Value, at: String, out: &mut Vec<(String, String)>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, v) in map {
                    if key == "$ref" {
                        out.push((at.clone(), v.as_str().unwrap_or_default().to_string()));
                    }
                    references(v, format!("{at}/{key}"), out);
                }
            }
            serde_json::Value::Array(list) => {
                for (i, v) in list.iter().enumerate() {
                    references(v, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_reference_resolves_and_no_two_schemas_share_a_name() {
        let doc = document();
        let mut refs = Vec::new();
        references(&doc, String::new(), &mut refs);
        assert!(refs.len() > 100, "{}", refs.len());
        for (at, target) in refs {
            let pointer = target.strip_prefix('#').unwrap_or("?");
            assert!(doc.pointer(pointer).is_some(), "{at}: {target}");
        }
        let mut all = Document::default();
        functions(&mut all);
        routes(&mut all);
        ApiError::schemas(&mut all.schemas);
        let (_, clashes) = unique(all.schemas);
        assert!(clashes.is_empty(), "{clashes:?}");
    }

    #[test]
    fn every_registered_server_function_and_route_is_described_with_its_method() {
        let doc = document();
        let paths = doc["paths"].as_object().unwrap();
        let functions: Vec<_> = leptos::server_fn::axum::server_fn_paths().collect();
        assert!(functions.len() >= 50, "{}", functions.len());
        for (path, method) in functions {
            let method = method.as_str().to_ascii_lowercase();
            assert!(
                paths.get(path).and_then(|p| p.get(&method)).is_some(),
                "{method} {path}"
            );
        }
        for route in Route::ALL {
            let method = route.method().as_str().to_ascii_lowercase();
            let path = route.path();
            assert!(
                paths.get(&path).and_then(|p| p.get(&method)).is_some(),
                "{method} {path}"
            );
        }
        let operations: usize = paths.values().map(|p| p.as_object().unwrap().len()).sum();
        assert_eq!(
            operations,
            leptos::server_fn::axum::server_fn_paths().count() + Route::ALL.len(),
            "nothing is described that is not served"
        );
    }

    #[test]
    fn each_operation_says_its_access_and_refusals() {
        let doc = document();
        let op = |path: &str, method: &str| doc["paths"][path][method].clone();
        let usage = op("/api/usage/quotas", "post");
        for code in ["400", "401", "403", "413", "415", "503"] {
            assert_eq!(
                usage["responses"][code]["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/Error",
                "{code}"
            );
        }
        assert_eq!(
            usage["security"],
            serde_json::json!([{"bearer": []}, {"session": []}])
        );
        let sign_in = op("/api/auth/sign-in", "post");
        assert_eq!(sign_in["security"], serde_json::json!([{}]));
        assert_eq!(
            sign_in["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/SignInRequest"
        );
        let request = &doc["components"]["schemas"]["SignInRequest"];
        assert_eq!(request["required"], serde_json::json!(["name", "password"]));
        let events = op("/api/turn/events", "get");
        let names: Vec<_> = events["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, ["after", "turn"]);
        assert_eq!(
            events["responses"]["200"]["content"]["text/event-stream"]["schema"]["$ref"],
            "#/components/schemas/TurnEvent"
        );
        let chat = op("/api/chat", "post");
        assert_eq!(
            chat["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ChatRequest"
        );
        assert!(doc["components"]["schemas"]["ChatRequest"]["properties"]["messages"].is_object());
        let readers = &op("/api/usage/quotas", "post")["responses"]["200"]["content"]
            ["application/json"]["schema"]["properties"]["readers"]["items"];
        assert_eq!(readers["items"]["type"], "string", "{readers}");
        assert_eq!(
            (readers["minItems"].clone(), readers["maxItems"].clone()),
            (2.into(), 2.into())
        );
        assert!(readers.get("prefixItems").is_none());
        let pixels = &doc["components"]["schemas"]["FileRef"]["properties"]["pixels"];
        assert_eq!(
            pixels["prefixItems"].as_array().unwrap().len(),
            2,
            "{pixels}"
        );
        assert_eq!(pixels["items"], false);
        let unit = op("/api/tokens/revoke", "post");
        assert_eq!(
            unit["responses"]["200"]["content"]["application/json"]["schema"]["type"],
            "null"
        );
        let link = &op("/api/tokens/create", "post")["responses"]["200"]["links"]["revokeToken"];
        assert_eq!(link["operationId"], "revokeToken");
        assert_eq!(link["requestBody"]["id"], "$response.body#/token/id");
    }

    #[test]
    fn links_to_rust_items_read_as_code_words() {
        assert_eq!(
            without_item_links("with an [`ApiError`], see [`x`](y) and [`a::b`]."),
            "with an `ApiError`, see [`x`](y) and `a::b`."
        );
        assert!(!json().contains("[`ApiError`]"));
    }

    /// The book keeps the description as served; `PONDER_WRITE_DOCS=1` writes it again.
    #[test]
    fn the_book_holds_the_description_as_served() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/api/openapi.json");
        let served = format!("{}\n", json());
        if std::env::var_os("PONDER_WRITE_DOCS").is_some() {
            std::fs::write(path, &served).unwrap();
        }
        let kept = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            kept == served,
            "docs/src/api/openapi.json is not the description the server serves: run \
             PONDER_WRITE_DOCS=1 cargo test --no-default-features --features ssr --lib openapi, \
             then python3 .ci/api-reference.py docs/src/api/openapi.json > docs/src/api/reference.md"
        );
    }

    #[test]
    fn each_event_type_has_a_schema_the_stream_picks_by_its_type() {
        let doc = document();
        let mapping = doc["components"]["schemas"]["TurnEvent"]["discriminator"]["mapping"]
            .as_object()
            .unwrap()
            .clone();
        for event in [
            crate::domain::TurnEvent::Delta { text: "x".into() },
            crate::domain::TurnEvent::Error(crate::domain::Failure::new("boom", false)),
            crate::domain::TurnEvent::Cite { n: 1 },
        ] {
            let json = serde_json::to_value(&event).unwrap();
            let tag = json["type"].as_str().unwrap();
            assert!(mapping.contains_key(tag), "{tag}");
        }
        assert_eq!(mapping.len(), 14);
        assert_eq!(
            mapping["thinking_start"],
            "#/components/schemas/EventThinkingStart"
        );
    }
}
