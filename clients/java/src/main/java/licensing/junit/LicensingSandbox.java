package licensing.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A {@code licensing-sim} for the test class: a {@link Tenant} parameter is a tenant of its
 * own for each test (deleted after it), a {@link Sandbox} parameter the simulator. One
 * simulator serves every class of the run with the same {@link #args}; it stops when the
 * run ends, and with the JVM however it ends. For options in code, register
 * {@link LicensingSandboxExtension} with {@code @RegisterExtension} instead.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(LicensingSandboxExtension.class)
public @interface LicensingSandbox {
  /** The built-in seed each tenant starts from ({@code "demo"}); empty for none. */
  String seed() default "";

  /** The simulator's flags ({@code sim/README.md}, "Command line"), besides its address. */
  String[] args() default {};
}
