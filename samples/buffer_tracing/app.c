/* SPDX-License-Identifier: MIT */
/* The application of samples/buffer_tracing: 4 threads, 1000 ranges and 10 marks each. */
#include <uptx/uptx.h>

#include <pthread.h>
#include <stdio.h>

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        uptx_range_push("iteration");
        if (i % 100 == 0)
            uptx_mark("progress");
        uptx_range_pop();
    }
    return NULL;
}

int main(void)
{
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&threads[i], NULL, work, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    printf("app: done\n");
    fflush(stdout);
    return 0;
}
