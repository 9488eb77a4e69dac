package licensing.junit;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Resolves {@link Sandbox} and {@link Tenant} parameters: the simulator is started once per
 * run and set of flags (kept in the root context's store, so JUnit stops it when the run
 * ends), a tenant once per context that asks for it (a test method, or a class for
 * {@code @BeforeAll}) and deleted when that context ends.
 *
 * <pre>{@code
 * @RegisterExtension
 * static LicensingSandboxExtension sandbox = LicensingSandboxExtension.withSeed("demo").args("--trial-member-limit", "5");
 * }</pre>
 */
public final class LicensingSandboxExtension implements ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(LicensingSandboxExtension.class);

  private final String seed;
  private final List<String> args;

  /** As {@link LicensingSandbox} says, from the test class's annotation (or none). */
  public LicensingSandboxExtension() {
    this(null, null);
  }

  private LicensingSandboxExtension(String seed, List<String> args) {
    this.seed = seed;
    this.args = args;
  }

  /** Each tenant starts from this built-in seed. */
  public static LicensingSandboxExtension withSeed(String seed) {
    return new LicensingSandboxExtension(seed, List.of());
  }

  /** The same, with the simulator's flags {@code args}. */
  public LicensingSandboxExtension args(String... args) {
    return new LicensingSandboxExtension(seed, List.of(args));
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == Sandbox.class || type == Tenant.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Optional<LicensingSandbox> annotation = context.getTestClass()
        .flatMap(type -> AnnotationSupport.findAnnotation(type, LicensingSandbox.class));
    List<String> flags = args != null ? args : annotation.map(a -> List.of(a.args())).orElse(List.of());
    String seeded = seed != null ? seed : annotation.map(LicensingSandbox::seed).orElse("");
    Sandbox sandbox = context.getRoot().getStore(NAMESPACE)
        .getOrComputeIfAbsent("sandbox " + flags, key -> Sandbox.start(flags.toArray(String[]::new)), Sandbox.class);
    if (parameter.getParameter().getType() == Sandbox.class) {
      return sandbox;
    }
    // One tenant per context, whatever number of parameters ask for it.
    return context.getStore(NAMESPACE)
        .getOrComputeIfAbsent("tenant " + flags, key -> sandbox.tenant(context.getDisplayName(), seeded), Tenant.class);
  }
}
