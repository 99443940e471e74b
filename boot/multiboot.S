/* multiboot.S: multiboot v1 and v2 headers, the stack, and (i686 kernel) the 32-bit entry point; loads a flat
   GDT, clears .bss, sets a stack, calls kernel_main. The x86-64 kernel has its own entry in multiboot64.S. */

/* The image carries both headers. GRUB's boot menu uses multiboot2, the only protocol that hands over the ACPI
   RSDP, the framebuffer and the memory map on a UEFI PC as well as on a BIOS PC. QEMU's -kernel loader (the
   boot tests and `ett qemu run` without --iso) only understands multiboot v1, so that header stays. */
.set MB_MAGIC,        0x1BADB002
.set MB_PAGE_ALIGN,   1 << 0  /* modules on 4 KiB boundaries */
.set MB_MEMORY_INFO,  1 << 1  /* mem_lower/mem_upper and the memory map */
.set MB_FLAGS,        MB_PAGE_ALIGN | MB_MEMORY_INFO
.set MB_CHECKSUM,     -(MB_MAGIC + MB_FLAGS)
.set STACK_SIZE,      64 * 1024

.set MB2_MAGIC,       0xE85250D6
.set MB2_ARCH_I386,   0  /* 32-bit protected mode entry */
.set MB2_OPTIONAL,    1  /* tag flag: boot even if the loader cannot honour the tag */
.set MB2_TAG_END,             0
.set MB2_TAG_INFO_REQUEST,    1
.set MB2_TAG_CONSOLE_FLAGS,   4
.set MB2_TAG_FRAMEBUFFER,     5
.set MB2_CONSOLE_EGA_TEXT,    1 << 1  /* the kernel can run on the VGA text screen */

/* The linker script puts this section first: the v1 header inside the first 8 KiB, the v2 header inside the
   first 32 KiB on an 8-byte boundary, as the two specifications ask. */
.section .multiboot, "a"
.align 8
multiboot1_header:
.long MB_MAGIC
.long MB_FLAGS
.long MB_CHECKSUM

.align 8
multiboot2_header:
.long MB2_MAGIC
.long MB2_ARCH_I386
.long multiboot2_end - multiboot2_header
.long -(MB2_MAGIC + MB2_ARCH_I386 + (multiboot2_end - multiboot2_header))
/* Information request: command line, loader name, memory map, framebuffer, old and new ACPI RSDP. Optional, so
   that a loader without one of them still boots the kernel (it then falls back to the BIOS areas). */
.align 8
info_request:
.short MB2_TAG_INFO_REQUEST
.short MB2_OPTIONAL
.long info_request_end - info_request
.long 1, 2, 6, 8, 14, 15
info_request_end:
/* The kernel runs on the VGA text screen or on any linear framebuffer (width/height/depth 0: no preference;
   80x25 cells of 8x16 need 640x400). GRUB turns this tag into gfxpayload when it loads the kernel; grub.cfg
   then sets gfxpayload=text on a BIOS PC (VGA text: the fastest console, what the VGA screen tests read), while
   UEFI, which has no text mode, keeps the GOP framebuffer. */
.align 8
.short MB2_TAG_CONSOLE_FLAGS
.short MB2_OPTIONAL
.long 12
.long MB2_CONSOLE_EGA_TEXT
.align 8
.short MB2_TAG_FRAMEBUFFER
.short MB2_OPTIONAL
.long 20
.long 0, 0, 32
.align 8
.short MB2_TAG_END
.short 0
.long 8
multiboot2_end:

.section .bss.stack, "aw", @nobits
.align 16
.global stack_top
stack_bottom:
.skip STACK_SIZE
stack_top:

#ifndef __x86_64__
/* A flat GDT of our own: the loader's GDT may sit in memory the capture buffer later takes (GRUB on UEFI puts
   it in its relocator's scratch memory, reported as free RAM). The exception handlers reload CS from it. */
.section .rodata
.align 8
gdt:
.quad 0
.quad 0x00CF9A000000FFFF  /* 0x08: code, base 0, limit 4 GiB, 32-bit */
.quad 0x00CF92000000FFFF  /* 0x10: data, base 0, limit 4 GiB */
gdt_end:
gdt_pointer:
.short gdt_end - gdt - 1
.long gdt

.section .text
.global _start
.type _start, @function
/* The loader enters in 32-bit protected mode, paging off, interrupts off: eax = magic, ebx = info address. */
_start:
    cli
    cld
    lgdt gdt_pointer
    ljmp $0x08, $1f
1:  mov $0x10, %ecx
    mov %ecx, %ds
    mov %ecx, %es
    mov %ecx, %fs
    mov %ecx, %gs
    mov %ecx, %ss
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
2:  cli
    hlt
    jmp 2b
.size _start, . - _start
#endif
