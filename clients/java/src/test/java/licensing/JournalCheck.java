package licensing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import licensing.junit.Tenant;
import licensing.sandbox.model.JournalEntry;
import licensing.sandbox.model.JournalPage;

/**
 * What a tenant's journal says its services answered, checked as {@code cargo xtask
 * clients --test} checks the TypeScript and Python scenarios' journals: every operation of
 * both specs answered with code 0, at least one HTTP 299 from each service, and every
 * request with one fresh {@code g_nonce}.
 */
final class JournalCheck {
  private static final Pattern OPERATION_ID = Pattern.compile("^\\s+operationId:\\s*(\\w+)\\s*$", Pattern.MULTILINE);

  private JournalCheck() {}

  /** The operation ids of a spec the jar carries ({@code order} or {@code member}). */
  static List<String> operations(String service) throws IOException {
    String resource = "/licensing/spec/" + service + ".yaml";
    try (InputStream in = JournalCheck.class.getResourceAsStream(resource)) {
      assertTrue(in != null, resource + " is not in the artifact");
      Matcher found = OPERATION_ID.matcher(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      List<String> ids = new ArrayList<>();
      while (found.find()) {
        ids.add(found.group(1));
      }
      return ids;
    }
  }

  static void everyOperationAnswered(Tenant tenant) throws Exception {
    Map<String, String> serviceOf = new LinkedHashMap<>();
    for (String service : List.of("order", "member")) {
      operations(service).forEach(id -> serviceOf.put(id, service));
    }
    assertEquals(19, serviceOf.size(), "the operations of spec/order.yaml and spec/member.yaml");
    JournalPage journal = tenant.journal().listJournal(null, null, null, null, null);
    List<String> problems = new ArrayList<>();
    if (journal.getDropped() != 0) {
      problems.add("the journal dropped " + journal.getDropped() + " entries");
    }
    Set<String> succeeded = new TreeSet<>();
    Map<String, Set<String>> errors = new TreeMap<>();
    Set<String> nonces = new HashSet<>();
    for (JournalEntry entry : journal.getEntries()) {
      String at = "request #" + entry.getSeq() + " (" + entry.getOperation() + ", HTTP " + entry.getStatus() + ")";
      String service = serviceOf.get(entry.getOperation());
      if (service == null) {
        problems.add(at + ": not an operation of the specs");
        continue;
      }
      List<String> given = new ArrayList<>();
      entry.getQuery().stream().filter(q -> q.getName().equals("g_nonce")).forEach(q -> given.add(q.getValue()));
      if (given.size() != 1 || given.get(0).isEmpty()) {
        problems.add(at + ": g_nonce " + given + ", not one fresh value");
      } else if (!nonces.add(given.get(0))) {
        problems.add(at + ": g_nonce " + given.get(0) + " was sent before");
      }
      if (entry.getStatus() == 200 && "0".equals(entry.getCode())) {
        succeeded.add(entry.getOperation());
      } else if (entry.getStatus() == 299 && entry.getCode() != null && !entry.getCode().equals("0")) {
        errors.computeIfAbsent(service, s -> new TreeSet<>()).add(entry.getCode());
      } else {
        problems.add(at + ": answered code " + entry.getCode());
      }
    }
    serviceOf.forEach((id, service) -> {
      if (!succeeded.contains(id)) {
        problems.add(service + " operation " + id + " was never answered with code 0");
      }
    });
    for (String service : List.of("order", "member")) {
      if (!errors.containsKey(service)) {
        problems.add("the " + service + " service never answered HTTP 299");
      }
    }
    assertEquals(List.of(), problems, "the journal of " + tenant);
    System.out.printf("Java: %d/%d operations answered code 0; %d requests, each with its own g_nonce; "
        + "business exceptions (HTTP 299): %s%n", succeeded.size(), serviceOf.size(), journal.getEntries().size(), errors);
  }
}
