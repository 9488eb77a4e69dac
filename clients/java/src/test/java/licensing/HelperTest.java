package licensing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import licensing.member.api.MembersApi;
import licensing.order.api.EnterpriseApi;
import licensing.order.model.DefaultCustomer;
import licensing.order.model.QueryEnterpriseReply;
import licensing.sandbox.api.ClockApi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The helper against a stub server that records what it is sent and answers as told. */
class HelperTest {
  private HttpServer server;
  private String url;
  private final List<HttpExchange> seen = new CopyOnWriteArrayList<>();
  private final List<String> queries = new CopyOnWriteArrayList<>();
  private volatile int status = 200;
  private volatile String body = "{\"code\":0,\"message\":\"success\",\"data\":[]}";

  @BeforeEach
  void serve() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      seen.add(exchange);
      queries.add(exchange.getRequestURI().getRawQuery());
      exchange.getRequestBody().readAllBytes();
      byte[] reply = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, reply.length == 0 ? -1 : reply.length);
      exchange.getResponseBody().write(reply);
      exchange.close();
    });
    server.start();
    url = "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private QueryEnterpriseReply query(licensing.order.ApiClient client) throws Exception {
    return Licensing.check(new EnterpriseApi(client).queryEnterpriseWithHttpInfo(Licensing.NONCE, "CH01", "CC-1", DefaultCustomer.All));
  }

  @Test
  void theOrderServiceGetsItsTokenAContentTypeOnAGetAndAFreshNonceEachTime() throws Exception {
    licensing.order.ApiClient order = Licensing.orderClient(url, "app-1");
    query(order);
    query(order);
    HttpExchange first = seen.get(0);
    assertEquals("GET", first.getRequestMethod());
    assertEquals(List.of("Bearer app-1"), first.getRequestHeaders().get("Authorization"));
    assertEquals(List.of("application/json"), first.getRequestHeaders().get("Content-Type"), "once, on a GET too");
    String nonce1 = nonce(queries.get(0)), nonce2 = nonce(queries.get(1));
    assertTrue(nonce1.matches("[A-Za-z0-9_-]{32}"), nonce1);
    assertNotEquals(nonce1, nonce2, "a nonce is never sent twice");
    assertTrue(queries.get(0).contains("channelCode=CH01"), queries.get(0));
  }

  @Test
  void theMemberCenterGetsItsThreeHeaders() throws Exception {
    body = "{\"code\":0,\"message\":\"success\",\"data\":[]}";
    new licensing.member.api.AssetsApi(Licensing.memberClient(url, "client-1", "user-1")).listAssetNums("EG-1", Licensing.NONCE);
    var headers = seen.get(0).getRequestHeaders();
    assertEquals(List.of("Bearer client-1"), headers.get("Authorization"));
    assertEquals(List.of("client-1"), headers.get("clientToken"));
    assertEquals(List.of("user-1"), headers.get("userToken"));
    assertEquals(1, queries.get(0).split("g_nonce=", -1).length - 1, queries.get(0));
  }

  @Test
  void theAdminApiGetsItsTokenAndNoNonce() throws Exception {
    body = "{\"now\":5,\"frozen\":true}";
    assertEquals(5L, new ClockApi(Licensing.sandboxClient(url, "admin-1")).getClock().getNow());
    assertEquals(List.of("Bearer admin-1"), seen.get(0).getRequestHeaders().get("Authorization"));
    assertNull(queries.get(0));
    new ClockApi(Licensing.sandboxClient(url, null)).getClock();
    assertNull(seen.get(1).getRequestHeaders().get("Authorization"));
  }

  @Test
  void http299IsABusinessExceptionWithCodeMessageAndCause() {
    status = 299;
    body = "{\"code\":\"13004\",\"message\":\"parameter validation failure\",\"cause\":\"channelCode is required\"}";
    BusinessException error = assertThrows(BusinessException.class, () -> query(Licensing.orderClient(url, "t")));
    assertEquals(299, error.status());
    assertEquals("13004", error.code());
    assertEquals("parameter validation failure", error.message());
    assertEquals("channelCode is required", error.cause());
    assertEquals("13004: parameter validation failure (channelCode is required)", error.getMessage());
    assertEquals("13004", error.reply(QueryEnterpriseReply.class).getCode().getString());
  }

  @Test
  void http200WithANonZeroCodeIsABusinessExceptionToo() {
    body = "{\"code\":\"60027\",\"message\":\"partial failure\",\"data\":{\"succeeded\":[],\"failed\":[]}}";
    BusinessException error = assertThrows(BusinessException.class, () -> Licensing.check(new MembersApi(
        Licensing.memberClient(url, "c", "u")).addMembersWithHttpInfo("EG-1", Licensing.NONCE,
            new licensing.member.model.AddMembersRequest().userList(List.of()))));
    assertEquals(200, error.status());
    assertEquals("60027", error.code());
    assertNull(error.cause());
    assertEquals("60027: partial failure", error.getMessage());
  }

  @Test
  void anotherStatusIsNoEnvelope() {
    status = 204;
    body = "";
    IllegalStateException error = assertThrows(IllegalStateException.class, () -> query(Licensing.orderClient(url, "t")));
    assertEquals("HTTP 204 is not a reply envelope of the operation", error.getMessage());
  }

  @Test
  void theStockMapperCannotDecodeAReplyCodeAndTheHelpersCan() throws Exception {
    String reply = "{\"code\":0,\"message\":\"success\",\"data\":[]}";
    // Scalar coercion on: 0 reads as Integer and as String, and the oneOf refuses two matches.
    Exception stock = assertThrows(Exception.class,
        () -> licensing.order.ApiClient.createDefaultObjectMapper().readValue(reply, QueryEnterpriseReply.class));
    assertTrue(String.valueOf(stock.getMessage()).contains("2 classes match"), stock.toString());
    var strict = Licensing.strict(licensing.order.ApiClient.createDefaultObjectMapper());
    assertEquals(0, strict.readValue(reply, QueryEnterpriseReply.class).getCode().getInteger());
    assertEquals("13004", strict.readValue("{\"code\":\"13004\",\"message\":\"m\"}", QueryEnterpriseReply.class).getCode().getString());
  }

  @Test
  void theNonceReplacesTheOneGivenWhereItWas() {
    assertEquals(URI.create("http://h/p?a=1&g_nonce=N&b=2"), Licensing.withNonce(URI.create("http://h/p?a=1&g_nonce=&b=2"), "N"));
    assertEquals(URI.create("http://h/p?g_nonce=N&x=%20"), Licensing.withNonce(URI.create("http://h/p?g_nonce=old&x=%20&g_nonce"), "N"));
    assertEquals(URI.create("http://h/t/1/p?g_nonce=N"), Licensing.withNonce(URI.create("http://h/t/1/p"), "N"));
    assertEquals(32, Licensing.nonce().length());
  }

  private static String nonce(String query) {
    Map<String, String> pairs = new java.util.HashMap<>();
    for (String pair : query.split("&")) {
      String[] kv = pair.split("=", 2);
      pairs.put(kv[0], kv.length > 1 ? kv[1] : "");
    }
    return pairs.get("g_nonce");
  }
}
