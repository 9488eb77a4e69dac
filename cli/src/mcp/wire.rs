//! The Model Context Protocol itself, through `rmcp`: the one file that names the
//! library, so that its next major version is this file's change. It turns the server's
//! tools into the protocol's, a call into [`Server::plan`] and [`Server::execute`] with
//! the person asked in between (elicitation), and serves a session over stdio or the
//! streamable HTTP transport.
//!
//! Sessions negotiate a protocol version with the `initialize` handshake (2025-11-25 and
//! older): a confirmation is then a request from the server to the client, answered
//! while the call waits.

use std::{borrow::Cow, collections::BTreeMap, sync::Arc};

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt as _,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
        ElicitationAction, ElicitationSchema, Implementation, InitializeResult, ListToolsResult,
        PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
        ToolAnnotations,
    },
    service::{ElicitationMode, RequestContext},
    transport::{
        StreamableHttpServerConfig, StreamableHttpService,
        streamable_http_server::session::local::LocalSessionManager,
    },
};

use super::{
    catalogue::ToolDef,
    policy::Refusal,
    reply::Reply,
    session::{Server, Session},
};

/// What the server tells a client about itself when a session starts.
const INSTRUCTIONS: &str = "The licensing platform's order service and member center. The \
    tools that read are always listed; a tool that changes the platform's state is listed \
    only when the person running this server allowed it, and each call of it is sent only \
    once the person confirms it. A refused call answers which flag of the server allows it.";

/// One client's session: the server's tools and rules, and what this session did.
#[derive(Clone)]
pub struct Handler {
    server: Arc<Server>,
    session: Arc<Session>,
}

impl Handler {
    fn new(server: Arc<Server>) -> Self {
        Handler {
            server,
            session: Arc::new(Session::default()),
        }
    }
}

/// A tool as the protocol lists it.
fn tool(def: &ToolDef) -> Tool {
    let hints = ToolAnnotations::new()
        .read_only(def.hints.read_only)
        .destructive(def.hints.destructive)
        .idempotent(def.hints.idempotent)
        // The platform's records, not the open world.
        .open_world(false);
    Tool::new(
        def.name.clone(),
        def.description.clone(),
        Arc::new(def.input.clone()),
    )
    .with_raw_output_schema(Arc::new(def.output.clone()))
    .with_annotations(hints)
}

/// An answer as the protocol sends it.
fn result(reply: Reply) -> CallToolResult {
    let content = vec![ContentBlock::text(reply.text)];
    let mut result = if reply.error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(reply.structured.into());
    result
}

impl Handler {
    /// Asks the person whether to send the call, through the client: `Ok` when they
    /// said yes.
    async fn confirm(
        &self,
        question: String,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), Refusal> {
        if !context
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Err(Refusal::CannotAsk);
        }
        let wait = self.server.policy.confirm_timeout;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question,
            // Nothing to fill in: accepting is the answer.
            requested_schema: ElicitationSchema::new(BTreeMap::new()),
        };
        match context
            .peer
            .create_elicitation_with_timeout(params, Some(wait))
            .await
        {
            Ok(answer) if answer.action == ElicitationAction::Accept => Ok(()),
            Ok(_) => Err(Refusal::Declined),
            Err(_) => Err(Refusal::Unanswered(wait)),
        }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("licensing", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.server.listed().map(tool).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.server.listed().find(|t| t.name == name).map(tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let plan = match self.server.plan(&self.session, &request.name, args) {
            Ok(plan) => plan,
            Err(answer) => return Ok(result(answer).into()),
        };
        let confirmed = match plan.question.clone() {
            None => None,
            Some(question) => match self.confirm(question, &context).await {
                Ok(()) => Some(true),
                Err(refusal) => return Ok(result(self.server.refuse(plan, refusal)).into()),
            },
        };
        let reply = self.server.execute(&self.session, plan, confirmed).await;
        Ok(result(reply).into())
    }
}

/// Serves one session over stdin and stdout until the client closes it.
pub async fn serve_stdio(server: Arc<Server>) -> Result<(), String> {
    let running = Handler::new(server)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the session did not start: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("the session ended with an error: {e}"))
}

/// The streamable HTTP transport at `/mcp`, a session per client, answering only to
/// `hosts` (`Host`) and `origins` (`Origin`, when a browser sends one): the checks the
/// caller's layer makes first, kept here too.
pub fn http_router(server: Arc<Server>, hosts: Vec<String>, origins: Vec<String>) -> axum::Router {
    let mut config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    config.allowed_origins = origins;
    let service = StreamableHttpService::new(
        move || Ok(Handler::new(server.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    axum::Router::new().nest_service("/mcp", service)
}
