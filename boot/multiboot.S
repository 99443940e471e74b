/* multiboot.S: multiboot v1 header and the 32-bit entry point; clears .bss, sets a stack, calls kernel_main. */

.set MB_MAGIC,        0x1BADB002
.set MB_PAGE_ALIGN,   1 << 0  /* modules on 4 KiB boundaries */
.set MB_MEMORY_INFO,  1 << 1  /* mem_lower/mem_upper and the memory map */
.set MB_FLAGS,        MB_PAGE_ALIGN | MB_MEMORY_INFO
.set MB_CHECKSUM,     -(MB_MAGIC + MB_FLAGS)
.set STACK_SIZE,      64 * 1024

/* The linker script puts this section first, well inside the 8 KiB the loader searches. */
.section .multiboot, "a"
.align 4
.long MB_MAGIC
.long MB_FLAGS
.long MB_CHECKSUM

.section .bss.stack, "aw", @nobits
.align 16
stack_bottom:
.skip STACK_SIZE
stack_top:

.section .text
.global _start
.type _start, @function
/* The loader enters in 32-bit protected mode, paging off, interrupts off: eax = magic, ebx = info address. */
_start:
    cli
    cld
    /* Zero .bss (the stack lives there too) without touching eax/ebx: GRUB zeroes it, but not every loader does. */
    mov %eax, %esi
    mov $__bss_start, %edi
    mov $__bss_end, %ecx
    sub %edi, %ecx
    xor %eax, %eax
    rep stosb
    mov %esi, %eax

    mov $stack_top, %esp
    xor %ebp, %ebp
    /* Keep esp 16-byte aligned at the call, as the i386 System V ABI expects. */
    sub $8, %esp
    push %ebx  /* info_addr */
    push %eax  /* magic */
    call kernel_main
1:  cli
    hlt
    jmp 1b
.size _start, . - _start
