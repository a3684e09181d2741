/**
 * A typed client for the tickets API with retries, request ids and
 * cursor pagination. Works in browsers and in Node 18+ (global fetch).
 */

export type TicketStatus = "open" | "pending" | "solved" | "closed";

export interface Ticket {
  id: string;
  subject: string;
  status: TicketStatus;
  priority: "low" | "normal" | "high" | "urgent";
  requesterId: string;
  assigneeId: string | null;
  tags: string[];
  createdAt: string;
  updatedAt: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface ClientOptions {
  baseUrl: string;
  token: string;
  maxRetries?: number;
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: string,
    message: string,
    public readonly requestId?: string,
  ) {
    super(`${status} ${code}: ${message}${requestId ? ` (request ${requestId})` : ""}`);
    this.name = "ApiError";
  }

  get retryable(): boolean {
    return this.status === 429 || this.status >= 500;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function backoff(attempt: number, retryAfter: string | null): number {
  if (retryAfter) {
    const seconds = Number(retryAfter);
    if (!Number.isNaN(seconds)) return seconds * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - Date.now());
  }
  const base = Math.min(8000, 250 * 2 ** attempt);
  return base / 2 + Math.random() * (base / 2);
}

export class TicketsClient {
  private readonly fetchImpl: typeof fetch;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;

  constructor(private readonly options: ClientOptions) {
    this.fetchImpl = options.fetchImpl ?? fetch;
    this.maxRetries = options.maxRetries ?? 3;
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  async getTicket(id: string): Promise<Ticket> {
    return this.request<Ticket>("GET", `/v2/tickets/${encodeURIComponent(id)}`);
  }

  async updateTicket(id: string, patch: Partial<Pick<Ticket, "status" | "priority" | "assigneeId" | "tags">>): Promise<Ticket> {
    return this.request<Ticket>("PATCH", `/v2/tickets/${encodeURIComponent(id)}`, patch);
  }

  async listTickets(filter: { status?: TicketStatus; assigneeId?: string; cursor?: string; limit?: number } = {}): Promise<Page<Ticket>> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(filter)) {
      if (value !== undefined) query.set(key, String(value));
    }
    return this.request<Page<Ticket>>("GET", `/v2/tickets?${query}`);
  }

  async *allTickets(filter: { status?: TicketStatus; assigneeId?: string } = {}): AsyncGenerator<Ticket> {
    let cursor: string | undefined;
    do {
      const page = await this.listTickets({ ...filter, cursor, limit: 100 });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const requestId = crypto.randomUUID();
    for (let attempt = 0; ; attempt++) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), this.timeoutMs);
      let response: Response;
      try {
        response = await this.fetchImpl(new URL(path, this.options.baseUrl), {
          method,
          signal: controller.signal,
          headers: {
            Authorization: `Bearer ${this.options.token}`,
            "Content-Type": "application/json",
            "X-Request-Id": requestId,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (cause) {
        clearTimeout(timer);
        if (attempt >= this.maxRetries) throw new ApiError(0, "network_error", String(cause), requestId);
        await sleep(backoff(attempt, null));
        continue;
      }
      clearTimeout(timer);
      if (response.ok) {
        return (response.status === 204 ? undefined : await response.json()) as T;
      }
      const payload = await response.json().catch(() => ({}));
      const error = new ApiError(
        response.status,
        payload?.error?.code ?? "unknown",
        payload?.error?.message ?? response.statusText,
        response.headers.get("x-request-id") ?? requestId,
      );
      if (!error.retryable || attempt >= this.maxRetries) throw error;
      await sleep(backoff(attempt, response.headers.get("retry-after")));
    }
  }
}
