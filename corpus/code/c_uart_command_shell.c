/*
 * uart_shell.c - a tiny line-oriented command shell for the kiln controller.
 *
 * Bytes arrive from the UART interrupt into a ring buffer; the main loop
 * pulls complete lines out of it, splits them into words and dispatches to
 * a handler from a fixed table. No heap, no stdio in the ISR.
 *
 * Commands (one per line, CR or LF terminated):
 *   status             print temperatures and the current segment
 *   set <seg> <C> <m>  set segment target temperature and ramp minutes
 *   start | stop       run or abort the firing programme
 *   help               list commands
 */
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>

#include "board.h"     /* uart_write(), irq_disable(), irq_enable() */
#include "kiln.h"      /* kiln_status_t, kiln_set_segment(), ... */

#define RX_BUF_SIZE   128u          /* must be a power of two */
#define LINE_MAX      64u
#define ARGS_MAX      6u

#if (RX_BUF_SIZE & (RX_BUF_SIZE - 1u)) != 0
#error "RX_BUF_SIZE must be a power of two"
#endif

/* ---- receive ring buffer ------------------------------------------------ */

static volatile uint8_t  rx_buf[RX_BUF_SIZE];
static volatile uint16_t rx_head;   /* written by the ISR only */
static volatile uint16_t rx_tail;   /* written by the main loop only */
static volatile uint32_t rx_dropped;

/* Called from the UART RX interrupt with one received byte. */
void uart_rx_isr(uint8_t byte)
{
    uint16_t next = (uint16_t)((rx_head + 1u) & (RX_BUF_SIZE - 1u));
    if (next == rx_tail) {
        rx_dropped++;               /* full: drop the newest byte */
        return;
    }
    rx_buf[rx_head] = byte;
    rx_head = next;
}

static bool rx_pop(uint8_t *out)
{
    if (rx_tail == rx_head) {
        return false;
    }
    *out = rx_buf[rx_tail];
    rx_tail = (uint16_t)((rx_tail + 1u) & (RX_BUF_SIZE - 1u));
    return true;
}

/* ---- output helpers ----------------------------------------------------- */

static void puts_raw(const char *s)
{
    uart_write((const uint8_t *)s, strlen(s));
}

/* Formats a signed integer without printf; buf must hold 12 bytes. */
static const char *fmt_int(int32_t v, char *buf)
{
    char *p = buf + 11;
    bool neg = v < 0;
    uint32_t u = neg ? (uint32_t)(-(v + 1)) + 1u : (uint32_t)v;

    *p = '\0';
    do {
        *--p = (char)('0' + (u % 10u));
        u /= 10u;
    } while (u != 0u);
    if (neg) {
        *--p = '-';
    }
    return p;
}

static void put_kv(const char *key, int32_t value, const char *unit)
{
    char num[12];
    puts_raw(key);
    puts_raw("=");
    puts_raw(fmt_int(value, num));
    puts_raw(unit);
    puts_raw("\r\n");
}

/* ---- command handlers --------------------------------------------------- */

typedef int (*cmd_fn)(int argc, char **argv);

static int cmd_help(int argc, char **argv);

static int cmd_status(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    kiln_status_t st;
    kiln_get_status(&st);
    put_kv("chamber", st.chamber_c, "C");
    put_kv("target", st.target_c, "C");
    put_kv("segment", st.segment, "");
    put_kv("elapsed", (int32_t)(st.elapsed_s / 60u), "min");
    put_kv("duty", st.duty_permille / 10, "%");
    put_kv("rx_dropped", (int32_t)rx_dropped, "");
    return 0;
}

/* Parses a decimal integer in [lo, hi]; returns false on junk or range error. */
static bool parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) {
        return false;
    }
    *out = v;
    return true;
}

static int cmd_set(int argc, char **argv)
{
    long seg, temp, ramp;
    if (argc != 4) {
        puts_raw("usage: set <seg 1-8> <temp 0-1300> <ramp 0-600>\r\n");
        return -1;
    }
    if (!parse_int(argv[1], 1, KILN_MAX_SEGMENTS, &seg) ||
        !parse_int(argv[2], 0, 1300, &temp) ||
        !parse_int(argv[3], 0, 600, &ramp)) {
        puts_raw("err: argument out of range\r\n");
        return -1;
    }
    if (kiln_is_running()) {
        puts_raw("err: stop the programme before editing it\r\n");
        return -1;
    }
    kiln_set_segment((uint8_t)seg, (int16_t)temp, (uint16_t)ramp);
    puts_raw("ok\r\n");
    return 0;
}

static int cmd_start(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (!kiln_lid_closed()) {
        puts_raw("err: lid open\r\n");
        return -1;
    }
    kiln_start();
    puts_raw("ok: firing\r\n");
    return 0;
}

static int cmd_stop(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    kiln_stop();              /* relays off first, then state */
    puts_raw("ok: stopped\r\n");
    return 0;
}

static const struct {
    const char *name;
    cmd_fn      fn;
    const char *help;
} commands[] = {
    { "status", cmd_status, "print temperatures and segment" },
    { "set",    cmd_set,    "set <seg> <temp C> <ramp min>" },
    { "start",  cmd_start,  "start the firing programme" },
    { "stop",   cmd_stop,   "abort the firing programme" },
    { "help",   cmd_help,   "list commands" },
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (size_t i = 0; i < N_COMMANDS; i++) {
        puts_raw("  ");
        puts_raw(commands[i].name);
        puts_raw(" - ");
        puts_raw(commands[i].help);
        puts_raw("\r\n");
    }
    return 0;
}

/* ---- line assembly and dispatch ----------------------------------------- */

/* Splits line in place on spaces and tabs; returns the word count. */
static int split_words(char *line, char **argv, int max)
{
    int argc = 0;
    char *p = line;
    while (*p != '\0' && argc < max) {
        while (*p == ' ' || *p == '\t') {
            *p++ = '\0';
        }
        if (*p == '\0') {
            break;
        }
        argv[argc++] = p;
        while (*p != '\0' && *p != ' ' && *p != '\t') {
            p++;
        }
    }
    return argc;
}

static void dispatch(char *line)
{
    char *argv[ARGS_MAX];
    int argc = split_words(line, argv, (int)ARGS_MAX);
    if (argc == 0) {
        return;
    }
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(argv[0], commands[i].name) == 0) {
            (void)commands[i].fn(argc, argv);
            return;
        }
    }
    puts_raw("err: unknown command, try 'help'\r\n");
}

/* Call from the main loop as often as possible. */
void shell_poll(void)
{
    static char line[LINE_MAX];
    static size_t len;
    static bool overflow;
    uint8_t c;

    while (rx_pop(&c)) {
        if (c == '\r' || c == '\n') {
            if (overflow) {
                puts_raw("err: line too long\r\n");
            } else if (len > 0u) {
                line[len] = '\0';
                dispatch(line);
            }
            len = 0u;
            overflow = false;
            puts_raw("> ");
        } else if (c == 0x7Fu || c == '\b') {
            if (len > 0u) {
                len--;
            }
        } else if (len < LINE_MAX - 1u) {
            line[len++] = (char)c;
        } else {
            overflow = true;      /* keep swallowing until end of line */
        }
    }
}
