package licensing;

import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.http.HttpRequest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What every request needs beyond the specs, added to the clients openapi-generator
 * generates from them ({@code licensing.order}, {@code licensing.member},
 * {@code licensing.sandbox}), and the reply envelope read as a result.
 *
 * <ul>
 *   <li>a fresh {@code g_nonce} on every request, a retry included: the generated methods
 *       still take the {@code gNonce} argument the specs declare; pass {@link #NONCE}, which
 *       the clients below replace;
 *   <li>the order service's {@code Authorization: Bearer <app token>} and
 *       {@code Content-Type: application/json} on every request, bodiless GETs too;
 *   <li>the member center's three headers: {@code Authorization: Bearer <client token>},
 *       {@code clientToken} and {@code userToken};
 *   <li>replies decoded without Jackson's scalar coercion: with it, every {@code ReplyCode}
 *       ({@code 0} or {@code "13004"}) matches both of its {@code oneOf} types, integer and
 *       string, and the generated deserializer refuses the reply ("2 classes match");
 *   <li>{@link #check}: the envelope of a success (HTTP 200, {@code code} 0), else a
 *       {@link BusinessException} with the business code, message and cause (HTTP 299).
 * </ul>
 */
public final class Licensing {
  /** The {@code gNonce} argument to pass: these clients replace it on every request. */
  public static final String NONCE = "";

  private static final SecureRandom RANDOM = new SecureRandom();

  private Licensing() {}

  /** 192 bits from the system's random source, URL-safe base64 without padding. */
  public static String nonce() {
    byte[] bytes = new byte[24];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  /** A client of the order service at {@code baseUrl}, for the generated {@code *Api} classes. */
  public static licensing.order.ApiClient orderClient(String baseUrl, String appToken) {
    licensing.order.ApiClient client = new licensing.order.ApiClient();
    client.updateBaseUri(baseUrl);
    client.setObjectMapper(strict(client.getObjectMapper()));
    // The order document requires the content type on every endpoint, bodiless ones too.
    client.setRequestInterceptor(
        credentials(Map.of("Authorization", "Bearer " + appToken, "Content-Type", "application/json"), true));
    return client;
  }

  /** A client of the member center at {@code baseUrl}: the client token is sent twice. */
  public static licensing.member.ApiClient memberClient(String baseUrl, String clientToken, String userToken) {
    licensing.member.ApiClient client = new licensing.member.ApiClient();
    client.updateBaseUri(baseUrl);
    client.setObjectMapper(strict(client.getObjectMapper()));
    client.setRequestInterceptor(
        credentials(
            Map.of("Authorization", "Bearer " + clientToken, "clientToken", clientToken, "userToken", userToken),
            true));
    return client;
  }

  /** A client of the simulator's admin API (plain HTTP statuses, no nonce); a null token sends none. */
  public static licensing.sandbox.ApiClient sandboxClient(String baseUrl, String adminToken) {
    licensing.sandbox.ApiClient client = new licensing.sandbox.ApiClient();
    client.updateBaseUri(baseUrl);
    if (adminToken != null) {
      client.setRequestInterceptor(credentials(Map.of("Authorization", "Bearer " + adminToken), false));
    }
    return client;
  }

  /** {@code mapper} without scalar coercion: a JSON number is no string, nor a string a number. */
  @SuppressWarnings("deprecation") // The generated oneOf deserializers read this very feature.
  static ObjectMapper strict(ObjectMapper mapper) {
    return mapper.disable(MapperFeature.ALLOW_COERCION_OF_SCALARS);
  }

  /** Sets {@code headers} (after the generated ones: a stale value cannot win) and a fresh nonce. */
  static Consumer<HttpRequest.Builder> credentials(Map<String, String> headers, boolean nonce) {
    return builder -> {
      headers.forEach(builder::setHeader);
      if (nonce) {
        builder.uri(withNonce(builder.copy().build().uri(), nonce()));
      }
    };
  }

  /** {@code uri} with exactly one {@code g_nonce}, {@code value}, where the first one was. */
  static URI withNonce(URI uri, String value) {
    List<String> query = new ArrayList<>();
    boolean placed = false;
    for (String pair : uri.getRawQuery() == null ? new String[0] : uri.getRawQuery().split("&")) {
      if (!pair.equals("g_nonce") && !pair.startsWith("g_nonce=")) {
        query.add(pair);
      } else if (!placed) {
        query.add("g_nonce=" + value);
        placed = true;
      }
    }
    if (!placed) {
      query.add(0, "g_nonce=" + value);
    }
    String base = uri.toString().split("[?#]", 2)[0];
    return URI.create(base + "?" + String.join("&", query));
  }

  /** The envelope of a success; {@link BusinessException} for HTTP 299 or a non-zero code. */
  public static <R> R check(licensing.order.ApiResponse<R> response) {
    return check(response.getStatusCode(), response.getData());
  }

  /** As {@link #check(licensing.order.ApiResponse)}, for the member center. */
  public static <R> R check(licensing.member.ApiResponse<R> response) {
    return check(response.getStatusCode(), response.getData());
  }

  private static <R> R check(int status, R reply) {
    if ((status != 200 && status != 299) || reply == null) {
      throw new IllegalStateException("HTTP " + status + " is not a reply envelope of the operation");
    }
    Map<String, Object> envelope = envelope(reply);
    Object code = envelope.get("code");
    if (status == 299 || !(code instanceof Number number && number.longValue() == 0)) {
      throw new BusinessException(status, String.valueOf(code), (String) envelope.get("message"),
          (String) envelope.get("cause"), reply);
    }
    return reply;
  }

  /** Every reply class has {@code getCode()} (a {@code ReplyCode}: Integer or String), {@code getMessage()}, {@code getCause()}. */
  private static Map<String, Object> envelope(Object reply) {
    Map<String, Object> fields = new LinkedHashMap<>();
    try {
      for (String field : List.of("code", "message", "cause")) {
        Method getter = reply.getClass().getMethod("get" + Character.toUpperCase(field.charAt(0)) + field.substring(1));
        Object value = getter.invoke(reply);
        if (value != null && field.equals("code") && !(value instanceof Number) && !(value instanceof String)) {
          value = value.getClass().getMethod("getActualInstance").invoke(value);
        }
        fields.put(field, value);
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(reply.getClass().getName() + " is not a reply envelope", e);
    }
    return fields;
  }
}
