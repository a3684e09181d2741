import React, { useCallback, useEffect, useMemo, useReducer, useState } from "react";
import type { Ticket, TicketStatus } from "./api";
import { TicketsClient } from "./api";
import { formatRelative } from "./time";
import styles from "./TicketTable.module.css";

type SortKey = "subject" | "priority" | "updatedAt";
type SortDir = "asc" | "desc";

interface State {
  tickets: Ticket[];
  loading: boolean;
  error: string | null;
  cursor: string | null;
  selected: Set<string>;
}

type Action =
  | { type: "loading" }
  | { type: "loaded"; tickets: Ticket[]; cursor: string | null; append: boolean }
  | { type: "failed"; error: string }
  | { type: "toggle"; id: string }
  | { type: "selectAll"; ids: string[] }
  | { type: "updated"; ticket: Ticket };

const PRIORITY_ORDER = { low: 0, normal: 1, high: 2, urgent: 3 } as const;

function reducer(state: State, action: Action): State {
  switch (action.type) {
    case "loading":
      return { ...state, loading: true, error: null };
    case "loaded":
      return {
        ...state,
        loading: false,
        tickets: action.append ? [...state.tickets, ...action.tickets] : action.tickets,
        cursor: action.cursor,
      };
    case "failed":
      return { ...state, loading: false, error: action.error };
    case "toggle": {
      const selected = new Set(state.selected);
      if (selected.has(action.id)) selected.delete(action.id);
      else selected.add(action.id);
      return { ...state, selected };
    }
    case "selectAll":
      return { ...state, selected: new Set(action.ids) };
    case "updated":
      return { ...state, tickets: state.tickets.map((t) => (t.id === action.ticket.id ? action.ticket : t)) };
  }
}

export interface TicketTableProps {
  client: TicketsClient;
  status?: TicketStatus;
  onOpen?: (ticket: Ticket) => void;
}

export function TicketTable({ client, status, onOpen }: TicketTableProps) {
  const [state, dispatch] = useReducer(reducer, {
    tickets: [],
    loading: false,
    error: null,
    cursor: null,
    selected: new Set<string>(),
  });
  const [sort, setSort] = useState<{ key: SortKey; dir: SortDir }>({ key: "updatedAt", dir: "desc" });

  const load = useCallback(
    async (cursor: string | null) => {
      dispatch({ type: "loading" });
      try {
        const page = await client.listTickets({ status, cursor: cursor ?? undefined, limit: 50 });
        dispatch({ type: "loaded", tickets: page.items, cursor: page.nextCursor, append: cursor !== null });
      } catch (error) {
        dispatch({ type: "failed", error: error instanceof Error ? error.message : String(error) });
      }
    },
    [client, status],
  );

  useEffect(() => {
    void load(null);
  }, [load]);

  const sorted = useMemo(() => {
    const factor = sort.dir === "asc" ? 1 : -1;
    return [...state.tickets].sort((a, b) => {
      switch (sort.key) {
        case "subject":
          return factor * a.subject.localeCompare(b.subject);
        case "priority":
          return factor * (PRIORITY_ORDER[a.priority] - PRIORITY_ORDER[b.priority]);
        case "updatedAt":
          return factor * (Date.parse(a.updatedAt) - Date.parse(b.updatedAt));
      }
    });
  }, [state.tickets, sort]);

  const closeSelected = async () => {
    for (const id of state.selected) {
      const ticket = await client.updateTicket(id, { status: "closed" });
      dispatch({ type: "updated", ticket });
    }
    dispatch({ type: "selectAll", ids: [] });
  };

  const header = (key: SortKey, label: string) => (
    <th
      onClick={() => setSort((s) => ({ key, dir: s.key === key && s.dir === "desc" ? "asc" : "desc" }))}
      aria-sort={sort.key === key ? (sort.dir === "asc" ? "ascending" : "descending") : "none"}
    >
      {label}
      {sort.key === key && <span className={styles.arrow}>{sort.dir === "asc" ? "▲" : "▼"}</span>}
    </th>
  );

  return (
    <div className={styles.container}>
      <div className={styles.toolbar}>
        <button disabled={state.selected.size === 0} onClick={closeSelected}>
          Close {state.selected.size > 0 ? `(${state.selected.size})` : ""}
        </button>
        {state.error && <span role="alert" className={styles.error}>{state.error}</span>}
      </div>
      <table className={styles.table}>
        <thead>
          <tr>
            <th>
              <input
                type="checkbox"
                checked={state.selected.size > 0 && state.selected.size === state.tickets.length}
                onChange={(e) => dispatch({ type: "selectAll", ids: e.target.checked ? state.tickets.map((t) => t.id) : [] })}
              />
            </th>
            {header("subject", "Subject")}
            {header("priority", "Priority")}
            <th>Status</th>
            {header("updatedAt", "Updated")}
          </tr>
        </thead>
        <tbody>
          {sorted.map((ticket) => (
            <tr key={ticket.id} className={styles[`priority_${ticket.priority}`]} onDoubleClick={() => onOpen?.(ticket)}>
              <td>
                <input type="checkbox" checked={state.selected.has(ticket.id)} onChange={() => dispatch({ type: "toggle", id: ticket.id })} />
              </td>
              <td>{ticket.subject}</td>
              <td>{ticket.priority}</td>
              <td>{ticket.status}</td>
              <td title={ticket.updatedAt}>{formatRelative(ticket.updatedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {state.cursor && (
        <button className={styles.more} disabled={state.loading} onClick={() => load(state.cursor)}>
          {state.loading ? "Loading…" : "Load more"}
        </button>
      )}
    </div>
  );
}
