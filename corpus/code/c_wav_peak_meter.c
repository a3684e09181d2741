/*
 * wavpeak.c - read a RIFF/WAVE file and print per-channel peak and RMS
 * levels in dBFS, one line per block of samples.
 *
 * Supports 16-bit and 24-bit PCM and 32-bit IEEE float, up to 8 channels.
 * Unknown chunks (LIST, bext, iXML, ...) are skipped.
 *
 * Build:  cc -std=c11 -O2 -Wall -Wextra -o wavpeak wavpeak.c -lm
 * Usage:  wavpeak [-b block_ms] file.wav
 */

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CHANNELS   8
#define DEFAULT_BLOCK  100      /* milliseconds */
#define FMT_PCM        0x0001
#define FMT_FLOAT      0x0003
#define FMT_EXTENSIBLE 0xFFFE
#define SILENCE_DB     (-144.0)

struct wav_format {
    uint16_t format_tag;
    uint16_t channels;
    uint32_t sample_rate;
    uint32_t byte_rate;
    uint16_t block_align;
    uint16_t bits_per_sample;
};

struct meter {
    double peak[MAX_CHANNELS];
    double sum_sq[MAX_CHANNELS];
    uint32_t frames;
};

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static int read_exact(FILE *f, void *buf, size_t n)
{
    return fread(buf, 1, n, f) == n ? 0 : -1;
}

/* Finds the chunk with the given id and leaves the file positioned at its
 * payload. Returns the payload size, or -1 if the file ends first. */
static long find_chunk(FILE *f, const char id[4])
{
    unsigned char hdr[8];
    while (read_exact(f, hdr, sizeof hdr) == 0) {
        uint32_t size = le32(hdr + 4);
        if (memcmp(hdr, id, 4) == 0)
            return (long)size;
        /* chunks are padded to an even length */
        if (fseek(f, (long)size + (size & 1), SEEK_CUR) != 0)
            return -1;
    }
    return -1;
}

static int parse_header(FILE *f, struct wav_format *fmt, long *data_size)
{
    unsigned char riff[12], buf[40];
    long size;

    if (read_exact(f, riff, sizeof riff) != 0 ||
        memcmp(riff, "RIFF", 4) != 0 || memcmp(riff + 8, "WAVE", 4) != 0) {
        fprintf(stderr, "wavpeak: not a RIFF/WAVE file\n");
        return -1;
    }
    size = find_chunk(f, "fmt ");
    if (size < 16 || size > (long)sizeof buf || read_exact(f, buf, (size_t)size) != 0) {
        fprintf(stderr, "wavpeak: missing or malformed fmt chunk (%ld bytes)\n", size);
        return -1;
    }
    fmt->format_tag      = le16(buf);
    fmt->channels        = le16(buf + 2);
    fmt->sample_rate     = le32(buf + 4);
    fmt->byte_rate       = le32(buf + 8);
    fmt->block_align     = le16(buf + 12);
    fmt->bits_per_sample = le16(buf + 14);
    if (fmt->format_tag == FMT_EXTENSIBLE && size >= 26)
        fmt->format_tag = le16(buf + 24);   /* first two bytes of the subformat GUID */
    if (size & 1)
        fseek(f, 1, SEEK_CUR);

    if (fmt->channels == 0 || fmt->channels > MAX_CHANNELS) {
        fprintf(stderr, "wavpeak: unsupported channel count %u\n", fmt->channels);
        return -1;
    }
    *data_size = find_chunk(f, "data");
    if (*data_size < 0) {
        fprintf(stderr, "wavpeak: no data chunk\n");
        return -1;
    }
    return 0;
}

static double sample_at(const unsigned char *p, const struct wav_format *fmt)
{
    switch (fmt->bits_per_sample) {
    case 16:
        return (int16_t)le16(p) / 32768.0;
    case 24: {
        int32_t v = (int32_t)((uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24) >> 8;
        return v / 8388608.0;
    }
    case 32:
        if (fmt->format_tag == FMT_FLOAT) {
            float x;
            uint32_t bits = le32(p);
            memcpy(&x, &bits, sizeof x);
            return x;
        }
        return (int32_t)le32(p) / 2147483648.0;
    default:
        return 0.0;
    }
}

static double to_db(double amplitude)
{
    return amplitude > 0.0 ? 20.0 * log10(amplitude) : SILENCE_DB;
}

static void report(const struct meter *m, unsigned channels, double t_start)
{
    printf("%9.3f", t_start);
    for (unsigned c = 0; c < channels; c++) {
        double rms = m->frames ? sqrt(m->sum_sq[c] / m->frames) : 0.0;
        printf("  ch%u peak %7.2f rms %7.2f", c + 1, to_db(m->peak[c]), to_db(rms));
    }
    putchar('\n');
}

int main(int argc, char **argv)
{
    struct wav_format fmt;
    struct meter m;
    long data_size, remaining;
    unsigned long block_ms = DEFAULT_BLOCK;
    unsigned char *buf;
    uint32_t frames_per_block, block_no = 0;
    int opt;
    FILE *f;

    while ((opt = getopt(argc, argv, "b:")) != -1) {
        if (opt == 'b') {
            char *end;
            block_ms = strtoul(optarg, &end, 10);
            if (*end != '\0' || block_ms == 0 || block_ms > 60000) {
                fprintf(stderr, "wavpeak: -b wants 1..60000 ms, got '%s'\n", optarg);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: wavpeak [-b block_ms] file.wav\n");
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: wavpeak [-b block_ms] file.wav\n");
        return 2;
    }
    f = fopen(argv[optind], "rb");
    if (!f) {
        fprintf(stderr, "wavpeak: %s: %s\n", argv[optind], strerror(errno));
        return 1;
    }
    if (parse_header(f, &fmt, &data_size) != 0) {
        fclose(f);
        return 1;
    }
    if (fmt.format_tag != FMT_PCM && fmt.format_tag != FMT_FLOAT) {
        fprintf(stderr, "wavpeak: format tag 0x%04x not supported\n", fmt.format_tag);
        fclose(f);
        return 1;
    }

    frames_per_block = (uint32_t)((uint64_t)fmt.sample_rate * block_ms / 1000);
    if (frames_per_block == 0)
        frames_per_block = 1;
    buf = malloc((size_t)frames_per_block * fmt.block_align);
    if (!buf) {
        perror("wavpeak: malloc");
        fclose(f);
        return 1;
    }

    fprintf(stderr, "# %u Hz, %u ch, %u bit, %.2f s\n", fmt.sample_rate, fmt.channels,
            fmt.bits_per_sample, (double)data_size / fmt.byte_rate);

    remaining = data_size;
    while (remaining >= fmt.block_align) {
        size_t want = (size_t)frames_per_block * fmt.block_align;
        size_t got;

        if ((long)want > remaining)
            want = (size_t)remaining - (size_t)remaining % fmt.block_align;
        got = fread(buf, 1, want, f);
        if (got < fmt.block_align)
            break;
        remaining -= (long)got;

        memset(&m, 0, sizeof m);
        m.frames = (uint32_t)(got / fmt.block_align);
        for (uint32_t i = 0; i < m.frames; i++) {
            const unsigned char *frame = buf + (size_t)i * fmt.block_align;
            for (unsigned c = 0; c < fmt.channels; c++) {
                double s = fabs(sample_at(frame + c * (fmt.bits_per_sample / 8), &fmt));
                if (s > m.peak[c])
                    m.peak[c] = s;
                m.sum_sq[c] += s * s;
            }
        }
        report(&m, fmt.channels, (double)block_no * block_ms / 1000.0);
        block_no++;
    }

    free(buf);
    fclose(f);
    return 0;
}
