// A small typed event bus with wildcard listeners, once-listeners and
// async delivery that isolates listener failures.

type EventMap = Record<string, unknown>;
type Listener<P> = (payload: P) => void | Promise<void>;

interface Subscription {
  unsubscribe(): void;
}

export interface DeliveryFailure<E extends EventMap> {
  event: keyof E;
  error: unknown;
}

export class EventBus<E extends EventMap> {
  private listeners = new Map<keyof E, Set<Listener<any>>>();
  private wildcard = new Set<(event: keyof E, payload: E[keyof E]) => void>();
  private failures: DeliveryFailure<E>[] = [];

  on<K extends keyof E>(event: K, listener: Listener<E[K]>): Subscription {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    return { unsubscribe: () => set!.delete(listener) };
  }

  once<K extends keyof E>(event: K, listener: Listener<E[K]>): Subscription {
    const sub = this.on(event, async (payload) => {
      sub.unsubscribe();
      await listener(payload);
    });
    return sub;
  }

  onAny(listener: (event: keyof E, payload: E[keyof E]) => void): Subscription {
    this.wildcard.add(listener);
    return { unsubscribe: () => this.wildcard.delete(listener) };
  }

  async emit<K extends keyof E>(event: K, payload: E[K]): Promise<number> {
    for (const listener of this.wildcard) {
      try {
        listener(event, payload);
      } catch (error) {
        this.failures.push({ event, error });
      }
    }
    const set = this.listeners.get(event);
    if (!set || set.size === 0) return 0;
    const results = await Promise.allSettled([...set].map((listener) => Promise.resolve().then(() => listener(payload))));
    for (const result of results) {
      if (result.status === "rejected") this.failures.push({ event, error: result.reason });
    }
    return results.length;
  }

  waitFor<K extends keyof E>(event: K, timeoutMs = 5000, predicate: (p: E[K]) => boolean = () => true): Promise<E[K]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        sub.unsubscribe();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${String(event)}`));
      }, timeoutMs);
      const sub = this.on(event, (payload) => {
        if (!predicate(payload)) return;
        clearTimeout(timer);
        sub.unsubscribe();
        resolve(payload);
      });
    });
  }

  drainFailures(): DeliveryFailure<E>[] {
    const failures = this.failures;
    this.failures = [];
    return failures;
  }

  listenerCount(event?: keyof E): number {
    if (event !== undefined) return this.listeners.get(event)?.size ?? 0;
    let total = this.wildcard.size;
    for (const set of this.listeners.values()) total += set.size;
    return total;
  }
}

// --- usage -----------------------------------------------------------------

interface AppEvents {
  "user.login": { userId: string; at: Date };
  "user.logout": { userId: string };
  "cart.updated": { cartId: string; items: number; totalCents: number };
  "order.placed": { orderId: string; cartId: string; totalCents: number };
}

export const bus = new EventBus<AppEvents>();

bus.on("cart.updated", ({ cartId, items, totalCents }) => {
  console.debug(`cart ${cartId}: ${items} items, ${(totalCents / 100).toFixed(2)} EUR`);
});

bus.once("order.placed", async ({ orderId }) => {
  await fetch(`/api/analytics/first-order`, { method: "POST", body: JSON.stringify({ orderId }) });
});

export async function checkout(cartId: string, totalCents: number): Promise<string> {
  const orderId = `ord_${Date.now().toString(36)}`;
  const delivered = await bus.emit("order.placed", { orderId, cartId, totalCents });
  if (delivered === 0) console.warn("nobody listens to order.placed");
  return orderId;
}
