package licensing;

/**
 * A business exception: HTTP 299 (or HTTP 200 with a non-zero {@code code}). {@link #code}
 * is the business code as a string ({@code "13004"}, {@code "60027"}); {@link #reply} the
 * whole envelope, decoded as the operation's reply ({@code 60027} on {@code addMembers}
 * carries both lists in its {@code data}).
 */
public final class BusinessException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;
  private final String code;
  private final String message;
  private final String cause;
  private final transient Object reply;

  BusinessException(int status, String code, String message, String cause, Object reply) {
    super(code + ": " + message + (cause == null || cause.isEmpty() ? "" : " (" + cause + ")"));
    this.status = status;
    this.code = code;
    this.message = message;
    this.cause = cause;
    this.reply = reply;
  }

  /** The HTTP status: 299, or 200 for a non-zero code. */
  public int status() {
    return status;
  }

  /** The business code, as a string. */
  public String code() {
    return code;
  }

  /** The reply's {@code message}. */
  public String message() {
    return message;
  }

  /** The reply's {@code cause}, or null. */
  public String cause() {
    return cause;
  }

  /** The whole envelope, as the operation's reply class. */
  public <R> R reply(Class<R> type) {
    return type.cast(reply);
  }
}
