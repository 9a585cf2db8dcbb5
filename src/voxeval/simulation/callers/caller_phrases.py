"""The simulated callers' fixed lines and the cues the scripted caller listens for, per language.

Everything a caller says that does not come from the scenario (acknowledgements, goodbyes,
the way an answer is framed) and the patterns that tell the scripted caller what the agent
asked. Our own wording. The scripted caller speaks only the languages listed in ``PHRASES``;
the LLM caller writes its own words in any language and uses these lines only as fallbacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from voxeval.errors import ConfigError


@dataclass(frozen=True)
class CallerPhrases:
    language: str
    # lines
    give_up: str  # the turn limit is reached
    goodbye: str  # the agent said goodbye
    nothing_else: str  # asked for anything else, the goal is done
    answer_intro: str  # before the requested facts
    answer_item: str  # one fact: {label} and {value}
    answer_joiner: str
    choice: str  # {wish}: the criterion closest to the agent's question
    decline: str
    accept: str
    acknowledge: str
    follow_up: str  # {request}: a decision-tree follow-up
    hang_up: str  # the LLM caller ended the call without words
    # cues
    goodbye_cue: re.Pattern[str]
    anything_else_cue: re.Pattern[str]
    help_cue: re.Pattern[str]
    yes_no_cue: re.Pattern[str]
    choice_cue: re.Pattern[str]
    # whole-label aliases: a field label containing the key is asked for by any of these words
    label_aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    withhold: str = "I'd rather not give you my {label}."  # a rule says never to give it
    # interruptions that carry meaning (said while the agent talks): {label}, {value}, {wish}
    correction: str = "Sorry, wait, I gave you the wrong {label}. It's {value}."
    new_information: str = "Sorry to cut in, my {label} is {value}."
    urgent_question: str = "Wait, before you go on, can you make sure of this: {wish}?"


ENGLISH = CallerPhrases(
    language="en",
    give_up="Sorry, I have to go now. Goodbye.",
    goodbye="Thank you, goodbye.",
    nothing_else="No, that's everything. Thank you, goodbye.",
    answer_intro="Sure, ",
    answer_item="my {label} is {value}",
    answer_joiner=", and ",
    choice="What I need is this: {wish}",
    decline="No, thank you, I don't want that.",
    accept="Yes, please go ahead.",
    acknowledge="Okay.",
    follow_up="Yes, one more thing. I'd also like to {request}.",
    hang_up="Goodbye.",
    goodbye_cue=re.compile(
        r"\b(good ?bye|bye|have a (great|good|nice|lovely) (day|evening|one))\b", re.I
    ),
    anything_else_cue=re.compile(
        r"\banything else\b|\bsomething else\b|\bother questions?\b", re.I
    ),
    help_cue=re.compile(r"\bhow (can|may) i help\b|\bwhat can i do for you\b", re.I),
    yes_no_cue=re.compile(
        r"\b(would you like|do you want|shall i|should i|can i go ahead|may i|is that "
        r"(correct|right)|does that (work|sound)|do you (confirm|agree)|okay with|ok with"
        r"|confirm)\b",
        re.I,
    ),
    choice_cue=re.compile(
        r"\b(when|which|where|what (day|time|date)|what would you like|what do you need)\b", re.I
    ),
    label_aliases={
        "date of birth": ("birthday", "born", "dob", "birthdate"),
        "phone number": ("phone", "telephone", "callback"),
        "email address": ("email", "e-mail"),
        "zip code": ("zip", "postcode"),
    },
)

SPANISH = CallerPhrases(
    language="es",
    give_up="Lo siento, tengo que colgar. Adiós.",
    goodbye="Gracias, adiós.",
    nothing_else="No, eso es todo. Muchas gracias, adiós.",
    answer_intro="Claro: ",
    answer_item="{value}",
    answer_joiner=", y ",
    choice="Lo que necesito es esto: {wish}",
    decline="No, gracias, eso no lo quiero.",
    accept="Sí, adelante, por favor.",
    acknowledge="De acuerdo.",
    follow_up="Sí, una cosa más. También quisiera {request}.",
    hang_up="Adiós.",
    withhold="Prefiero no darle ese dato.",
    correction="Perdone, espere, me he equivocado. Es {value}.",
    new_information="Perdone que le interrumpa, es {value}.",
    urgent_question="Espere, antes de seguir, ¿puede asegurarse de esto?: {wish}",
    goodbye_cue=re.compile(r"\b(adi[oó]s|hasta luego|que tenga un buen d[ií]a)\b", re.I),
    anything_else_cue=re.compile(
        r"\balgo m[aá]s\b|\botra (cosa|consulta|pregunta)\b|\bm[aá]s (consultas|preguntas)\b",
        re.I,
    ),
    help_cue=re.compile(r"\b(en qu[eé]|c[oó]mo) (le |te |la |lo )?(puedo|podemos) ayudar", re.I),
    yes_no_cue=re.compile(
        r"\b(desea|quiere|le parece|le viene bien|puedo proceder|procedo|confirma|es correcto"
        r"|est[aá] de acuerdo)\b",
        re.I,
    ),
    choice_cue=re.compile(
        r"\b(cu[aá]ndo|cu[aá]l|d[oó]nde|qu[eé] (d[ií]a|hora|fecha)|qu[eé] necesita)\b", re.I
    ),
    label_aliases={
        "date of birth": ("nacimiento",),
        "phone": ("teléfono", "telefono"),
        "email": ("correo",),
        "zip code": ("postal",),
        "last name": ("apellido", "apellidos"),
        "first name": ("nombre",),
        "name": ("nombre",),
        "id": ("identificación", "identificacion", "número", "numero"),
        "address": ("dirección", "direccion", "domicilio"),
    },
)

PHRASES: dict[str, CallerPhrases] = {p.language: p for p in (ENGLISH, SPANISH)}


def phrases_for(language: str, caller: str = "scripted") -> CallerPhrases:
    """The phrases of ``language`` (region ignored); ConfigError naming the caller when there
    are none."""
    code = language.replace("_", "-").split("-")[0].lower()
    if code not in PHRASES:
        raise ConfigError(
            f"simulation.caller: the {caller!r} caller speaks {', '.join(sorted(PHRASES))}, not "
            f"{language!r}; use caller: llm for other languages"
        )
    return PHRASES[code]
