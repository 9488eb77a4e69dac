package licensing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.io.StringWriter;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.regex.Matcher;
import javax.tools.ToolProvider;
import licensing.junit.Sandbox;
import licensing.sandbox.api.JournalApi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The two Java blocks of {@code docs/other-languages.md}'s "Java" section, as written. The
 * program: saved as {@code Example.java} and started with {@code java Example.java} against
 * a fresh {@code licensing-sim --seed demo}, the one change its base URL; every line it
 * prints must be the one its comment claims (the comment's double-quoted part when it has
 * one, {@code …} standing for any text), in order, as for the TypeScript and Python
 * examples, and a claimed business error must be in the simulator's journal as HTTP 299.
 * The test class: compiled and run by a JUnit launcher of its own, its test passing.
 */
class GuideExampleTest {
  static final String GUIDE = "docs/other-languages.md";
  static final String SECTION = "## Java";
  static final String BASE_URL = "http://127.0.0.1:8080";

  /** The fenced blocks of the section whose info string is {@code info}. */
  static List<String> blocks(String info) throws Exception {
    Path guide = Path.of(System.getProperty("licensing.root", "../.."), GUIDE);
    List<String> lines = Files.readAllLines(guide, StandardCharsets.UTF_8);
    int start = lines.indexOf(SECTION);
    assertTrue(start >= 0, GUIDE + " has no \"" + SECTION + "\" section");
    List<String> blocks = new ArrayList<>();
    StringBuilder open = null;
    for (String line : lines.subList(start + 1, lines.size())) {
      if (open == null && line.startsWith("## ")) {
        break;
      } else if (open == null && line.strip().equals("```" + info)) {
        open = new StringBuilder();
      } else if (open != null && line.strip().equals("```")) {
        blocks.add(open.toString());
        open = null;
      } else if (open != null) {
        open.append(line).append('\n');
      }
    }
    return blocks;
  }

  /** What each printing line's comment claims. */
  static List<String> claims(String code) {
    List<String> claims = new ArrayList<>();
    for (String line : code.split("\n")) {
      int comment = line.lastIndexOf("// ");
      if (!line.contains("System.out.println(")) {
        continue;
      }
      assertTrue(comment > 0, "a line that prints says what, in a comment: " + line);
      String said = line.substring(comment + 3).strip();
      int open = said.indexOf('"'), close = said.lastIndexOf('"');
      claims.add(open >= 0 && close > open ? said.substring(open + 1, close) : said);
    }
    return claims;
  }

  /** {@code claim}, each {@code …} standing for any text, as a whole-line pattern. */
  static boolean matches(String claim, String line) {
    StringBuilder regex = new StringBuilder();
    for (String part : claim.split("…", -1)) {
      regex.append(regex.length() == 0 ? "" : ".*").append(Pattern.quote(part));
    }
    return line.matches(regex.toString());
  }

  @Test
  void theClaimsAreReadAsTheOtherLanguagesAreRead() {
    assertEquals(List.of("[1, 2]", "80001: …"), claims("System.out.println(a); // [1, 2]\n"
        + "int x = 1; // not printed\n  System.out.println(e); // HTTP 299: \"80001: …\"\n"));
    assertTrue(matches("80001: user center exception (…)", "80001: user center exception (it exists)"));
    assertFalse(matches("80001: …", "60000: the token"));
  }

  @Test
  void theGuidesProgramPrintsWhatItsCommentsSay(@TempDir Path dir) throws Exception {
    List<String> programs = blocks("java").stream().filter(b -> b.contains("public static void main")).toList();
    assertEquals(1, programs.size(), "one program in the section: " + programs.size());
    String code = programs.get(0);
    assertTrue(code.contains(BASE_URL), "the program uses " + BASE_URL);
    List<String> claims = claims(code);
    assertFalse(claims.isEmpty(), "the program claims what it prints");
    try (Sandbox sandbox = Sandbox.start("--seed", "demo")) {
      Files.writeString(dir.resolve("Example.java"), code.replace(BASE_URL, sandbox.url()));
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      Process run = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "Example.java")
          .directory(dir.toFile()).redirectError(dir.resolve("stderr").toFile()).start();
      String stdout = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(run.waitFor(120, TimeUnit.SECONDS), "the program ends");
      String shown = "its stdout:\n" + stdout + "its stderr:\n" + Files.readString(dir.resolve("stderr"));
      assertEquals(0, run.exitValue(), shown);
      List<String> printed = stdout.lines().toList();
      assertEquals(claims.size(), printed.size(), "claimed " + claims + "; " + shown);
      for (int i = 0; i < claims.size(); i++) {
        assertTrue(matches(claims.get(i), printed.get(i)), "claims " + claims.get(i) + " but printed " + printed.get(i));
        Matcher business = Pattern.compile("^(\\d+): ").matcher(claims.get(i));
        if (business.find()) {
          var answered = new JournalApi(sandbox.admin()).listJournal(null, business.group(1), null, null, null).getEntries();
          assertTrue(answered.stream().anyMatch(e -> e.getStatus() == 299), business.group(1) + " answered with HTTP 299");
        }
      }
    }
  }

  @Test
  void theGuidesTestClassPassesUnderTheExtension(@TempDir Path dir) throws Exception {
    List<String> tests = blocks("java").stream().filter(b -> b.contains("@LicensingSandbox")).toList();
    assertEquals(1, tests.size(), "one test class in the section");
    Matcher name = Pattern.compile("\\bclass (\\w+)").matcher(tests.get(0));
    assertTrue(name.find(), "the block declares a class");
    Path source = dir.resolve(name.group(1) + ".java");
    Files.writeString(source, tests.get(0));
    Path classes = Files.createDirectories(dir.resolve("classes"));
    java.io.ByteArrayOutputStream errors = new java.io.ByteArrayOutputStream();
    int compiled = ToolProvider.getSystemJavaCompiler().run(null, errors, errors, "-d", classes.toString(), "-cp",
        System.getProperty("java.class.path"), source.toString());
    assertEquals(0, compiled, "javac " + source + ":\n" + errors.toString(StandardCharsets.UTF_8));
    try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
      SummaryGeneratingListener listener = new SummaryGeneratingListener();
      LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
          .selectors(DiscoverySelectors.selectClass(loader.loadClass(name.group(1)))).build(), listener);
      TestExecutionSummary summary = listener.getSummary();
      StringWriter report = new StringWriter();
      summary.printFailuresTo(new java.io.PrintWriter(report), 20);
      assertEquals(0, summary.getTotalFailureCount(), report.toString());
      assertEquals(1, summary.getTestsSucceededCount(), "the block's one test ran and passed");
    }
  }
}
